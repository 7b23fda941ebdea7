// Narrator embed loader. Put it where the player should appear:
//
//   <script src="https://NARRATOR/embed.js" data-project="1" data-external-id="post-42" async></script>
//
// It inserts the player's iframe right after itself. Without
// data-external-id the audio is found by the article's URL: data-url, else
// the page's canonical link, else its address without the fragment. A
// signed project's page carries the token its CMS signed in data-token.
// The loader tells the player the page's origin, which a project may
// restrict.
//
// data-playlist plays the project's latest audios instead ("" for all, or
// a category of their metadata). data-readalong highlights, in the page
// itself, the sentence being read, in the element data-article names (a
// CSS selector: the match around the embed, else the first; else the
// nearest <article>, else <main>). A click on a sentence, or the "Play
// from here" button the keyboard finds before each paragraph, plays from
// there. The player becomes a mini-player fixed to the bottom of the
// window once it is scrolled past, unless data-mini="off". The page and
// the player talk by postMessage: the loader takes only messages from its
// iframe on Narrator's origin and posts only to that origin. The page's
// Media Session gets the player's metadata too.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var origin = new URL(script.src, document.baseURI).origin;
  function attr(n) { return script.getAttribute("data-" + n); }
  var enc = encodeURIComponent;
  var project = attr("project");
  if (!project || !/^[0-9]+$/.test(project)) {
    if (window.console) console.error("Narrator embed: data-project must be the project's ID");
    return;
  }
  var query, path = "/embed/" + project;
  var ext = attr("external-id"), list = attr("playlist");
  if (list !== null) {
    path += "/playlist";
    query = "category=" + enc(list);
  } else if (ext) {
    query = "external_id=" + enc(ext);
  } else {
    var url = attr("url");
    if (!url) {
      var canonical = document.querySelector('link[rel="canonical"]');
      url = canonical && canonical.href ? canonical.href : window.location.href;
    }
    query = "url=" + enc(url.split("#")[0]);
  }
  var token = attr("token");
  if (token) query += "&token=" + enc(token);
  query += "&origin=" + enc(window.location.origin);
  var slot = document.createElement("div");
  slot.className = "narrator-slot";
  var frame = document.createElement("iframe");
  frame.src = origin + path + "?" + query;
  frame.title = attr("title") || (list !== null ? "Listen to the latest articles" : "Listen to this article");
  frame.setAttribute("allow", "autoplay");
  frame.className = "narrator-player";
  var fs = frame.style;
  fs.width = "100%";
  fs.height = "140px";
  fs.border = "0";
  fs.display = "block";
  slot.appendChild(frame);
  script.parentNode.insertBefore(slot, script.nextSibling);
  var css = document.createElement("style");
  css.textContent = ".narrator-mini{position:fixed!important;left:0;right:0;bottom:8px;z-index:2147483000;" +
    "max-width:720px;margin:0 auto;width:calc(100% - 16px)!important;box-shadow:0 4px 24px rgba(0,0,0,.25);border-radius:12px;background:#fff}" +
    ".narrator-p{cursor:pointer}.narrator-go{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);border:0;padding:0}" +
    ".narrator-go:focus{position:static;width:auto;height:auto;clip:auto;margin-right:.5em;padding:0 .5em;font:inherit;border-radius:4px;background:#18202b;color:#fff}.narrator-s.narrator-on{background:#fff1b8;color:#18202b;box-shadow:0 0 0 2px #fff1b8}" +
    "::highlight(narrator-word){background:#ffd54a;color:#18202b}";
  document.head.appendChild(css);

  function send(msg) {
    if (frame.contentWindow) frame.contentWindow.postMessage(msg, origin);
  }
  var readalong = attr("readalong") !== null && list === null;
  frame.addEventListener("load", function () { send({ narrator: "hello", readalong: readalong }); });

  // The mini-player: the iframe itself, fixed to the bottom of the window
  // while its place, kept by the slot, is above the window; only a player
  // (which says where it is), not a message, becomes one.
  var mini = false, dismissed = attr("mini") === "off", player = false;
  function setMini(on) {
    on = on && !dismissed && player;
    if (on === mini) return;
    mini = on;
    slot.style.minHeight = on ? frame.offsetHeight + "px" : "";
    frame.classList.toggle("narrator-mini", on);
    send({ narrator: "mini", on: on });
  }
  if (window.IntersectionObserver) {
    new IntersectionObserver(function (es) {
      var e = es[es.length - 1];
      setMini(!e.isIntersecting && e.boundingClientRect.bottom < 0);
    }).observe(slot);
  }

  var read = null;
  window.addEventListener("message", function (e) {
    if (e.source !== frame.contentWindow || e.origin !== origin) return;
    var d = e.data;
    if (!d) return;
    if (d.narrator === "height" && typeof d.height === "number" && d.height > 0 && d.height < 5000) {
      fs.height = Math.ceil(d.height) + "px";
    } else if (d.narrator === "dismiss") {
      setMini(false);
      dismissed = true;
    } else if (d.narrator === "transcript" && readalong && d.sentences && d.sentences.length) {
      if (read) read.off();
      read = readAlong(d.track, d.sentences);
    } else if (d.narrator === "meta" && d.meta && window.MediaMetadata && navigator.mediaSession) {
      try { navigator.mediaSession.metadata = new MediaMetadata(d.meta); } catch (x) { /* not metadata */ }
    } else if (d.narrator === "time") {
      player = true;
      if (read && d.track === read.track) read.time(d);
    }
  });

  var BLOCKS = "p,h1,h2,h3,h4,h5,h6,li,blockquote,dd,dt,td,th,pre";
  var SKIP = "aside,figure,figcaption,nav,footer,script,style,noscript,template,button,select,textarea,.narrator-slot,[aria-hidden=true],[hidden],[data-narrator-skip]";
  var WORD = /[\p{L}\p{N}]/u;

  function key(s) {
    var k = "";
    for (var i = 0; i < s.length; i++) if (WORD.test(s[i])) k += s[i].toLowerCase();
    return k;
  }

  // index returns the letters and digits of the article's blocks, lower
  // case, with the text node and offset of each.
  function index(blocks) {
    var x = { s: "", n: [], o: [] };
    blocks.forEach(function (b) {
      var w = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
      for (var t = w.nextNode(); t; t = w.nextNode()) {
        if (t.parentNode.closest(SKIP)) continue;
        for (var i = 0; i < t.data.length; i++) {
          if (!WORD.test(t.data[i])) continue;
          var l = t.data[i].toLowerCase();
          for (var j = 0; j < l.length; j++) { x.s += l[j]; x.n.push(t); x.o.push(i); }
        }
      }
    });
    return x;
  }

  // align finds each sentence in the text, in order. Where a sentence
  // occurs more than once (a pull quote), the occurrence the next sentence
  // follows most closely wins; a sentence not found is left out.
  function align(text, keys) {
    var pos = 0, found = [];
    keys.forEach(function (k, i) {
      if (k.length < 2) return;
      var next = keys[i + 1] || "", best = -1, gap = Infinity;
      for (var from = pos, c = 0; c < 4; c++) {
        var a = text.indexOf(k, from);
        if (a < 0) break;
        var n = next ? text.indexOf(next, a + k.length) : a + k.length;
        var g = n < 0 ? Infinity : n - a - k.length;
        if (best < 0 || g < gap) { best = a; gap = g; }
        if (g === 0) break;
        from = a + 1;
      }
      if (best < 0) return;
      found[i] = [best, best + k.length];
      pos = best + k.length;
    });
    return found;
  }

  // wrap puts the characters a to b of the index into spans of sentence i;
  // the index stays valid for what comes before a.
  function wrap(x, a, b, i) {
    var runs = [];
    for (var k = a; k < b; k++) {
      var r = runs[runs.length - 1];
      if (r && r.n === x.n[k]) r.e = x.o[k] + 1; else runs.push({ n: x.n[k], s: x.o[k], e: x.o[k] + 1 });
    }
    var spans = [];
    for (var j = runs.length - 1; j >= 0; j--) {
      var mid = runs[j].n.splitText(runs[j].s);
      mid.splitText(runs[j].e - runs[j].s);
      var span = document.createElement("span");
      span.className = "narrator-s";
      span.setAttribute("data-narrator-s", String(i));
      mid.parentNode.replaceChild(span, mid);
      span.appendChild(mid);
      spans.unshift(span);
      var p = span.closest(".narrator-p");
      if (p) p.setAttribute("data-narrator-first", String(i));
    }
    return spans;
  }

  function find(sel) {
    try { return script.closest(sel) || document.querySelector(sel); } catch (e) { return null; }
  }

  function container() {
    var sel = attr("article");
    return sel && find(sel) || find("article") || find("main") || document.body;
  }

  // readAlong marks the sentences in the page and lights the one at the
  // player's time: the last one started, and its word where the voice
  // timed its words and the browser has CSS highlights.
  function readAlong(track, sentences) {
    var root = container();
    var blocks = Array.prototype.filter.call(root.querySelectorAll(BLOCKS), function (b) {
      return !b.closest(SKIP) && !b.querySelector(BLOCKS);
    });
    var x = index(blocks);
    var keys = sentences.map(function (s) { return key(s.text); });
    var found = align(x.s, keys);
    blocks.forEach(function (b) { b.classList.add("narrator-p"); });
    var marks = [];
    for (var i = found.length - 1; i >= 0; i--) if (found[i]) marks[i] = wrap(x, found[i][0], found[i][1], i);
    var gos = [];
    blocks.forEach(function (b) {
      var i = b.getAttribute("data-narrator-first");
      if (i === null) return b.classList.remove("narrator-p");
      var go = document.createElement("button");
      go.type = "button";
      go.className = "narrator-go";
      go.textContent = "Play from here";
      go.onclick = function () { play(i); };
      gos.push(b.insertBefore(go, b.firstChild));
    });
    var lit = -1, word = null, clock = null, raf = 0, words = wordRanges(blocks, sentences, keys, found);
    var hl = window.CSS && CSS.highlights && window.Highlight ? CSS.highlights : null;
    function now() {
      return clock.playing ? clock.t + (performance.now() - clock.at) / 1000 * clock.rate : clock.t;
    }
    function tick() {
      raf = 0;
      var t = now(), i = -1, w = null;
      for (var k = 0; k < sentences.length; k++) if (marks[k] && sentences[k].start <= t) i = k;
      if (i !== lit) {
        (marks[lit] || []).forEach(function (s) { s.classList.remove("narrator-on"); });
        (marks[i] || []).forEach(function (s) { s.classList.add("narrator-on"); });
        document.documentElement.setAttribute("data-narrator-sentence", String(i));
        lit = i;
      }
      (words[i] || []).forEach(function (r) { if (r.start <= t) w = r; });
      if (hl && w !== word) {
        if (w) hl.set("narrator-word", new window.Highlight(w.range)); else hl.delete("narrator-word");
      }
      word = w;
      if (clock.playing) raf = requestAnimationFrame(tick);
    }
    function play(i) { send({ narrator: "seek", time: sentences[+i].start, play: true }); }
    function click(e) {
      if (!root.contains(e.target) || e.target.closest("a,button,input,select,textarea,label")) return;
      if (!window.getSelection().isCollapsed) return; // selecting text
      var s = e.target.closest(".narrator-s"), p = e.target.closest(".narrator-p");
      var i = s ? s.getAttribute("data-narrator-s") : p && p.getAttribute("data-narrator-first");
      if (i !== null && i !== undefined) play(i);
    }
    document.addEventListener("click", click);
    return {
      track: track,
      time: function (d) {
        if (!d.playing && !d.t && !clock) return; // nothing lit before the first play
        clock = { t: d.t, playing: d.playing, rate: d.rate || 1, at: performance.now() };
        if (!raf) tick();
      },
      off: function () {
        document.removeEventListener("click", click);
        gos.forEach(function (g) { g.remove(); });
        if (raf) cancelAnimationFrame(raf);
        marks.forEach(function (m) { m.forEach(function (s) { s.classList.remove("narrator-on"); }); });
      }
    };
  }

  // wordRanges returns, per sentence, its words found in the page in order
  // (a number the voice spells out is not), with their times and ranges.
  function wordRanges(blocks, sentences, keys, found) {
    var x = index(blocks), out = [];
    sentences.forEach(function (s, i) {
      if (!found[i] || !s.words || !document.createRange) return;
      var pos = found[i][0], end = found[i][1];
      out[i] = [];
      s.words.forEach(function (w) {
        var k = key(w.text), a = k ? x.s.indexOf(k, pos) : -1;
        if (a < 0 || a + k.length > end) return;
        var r = document.createRange();
        r.setStart(x.n[a], x.o[a]);
        r.setEnd(x.n[a + k.length - 1], x.o[a + k.length - 1] + 1);
        out[i].push({ start: w.start, range: r });
        pos = a + k.length;
      });
    });
    return out;
  }
})();
