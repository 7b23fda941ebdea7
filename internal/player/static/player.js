// Narrator player. It turns each .np element that holds an <audio> into a
// player: play and pause, skip 15 s, a seek bar, the speed, elapsed and
// total time, and the read-along transcript, whose sentence being spoken is
// highlighted and can be clicked to play from there. Without this script
// the <audio> keeps the browser's own controls.
//
// The element's data attributes say what to load:
//   data-hls         the HLS playlist, used where the browser plays HLS itself
//   data-transcript  the transcript JSON: {"duration", "sentences": [{"start", "end", "text", "words"}]}
//   data-duration    the length in seconds, until the audio's own is known
//   data-title, data-author, data-artwork  the lock screen's title, artist
//                    and image (Media Session); data-site (the embedding
//                    page's host) its album, and the artist where none
//   data-events      where to report listening events ("" for nowhere),
//                    with data-project and data-audio
// A playlist holds .np-item buttons with the same attributes (data-mp3 for
// the <audio>'s src), played one after the other.
//
// Keys, while the player has the focus: space or k plays and pauses, the
// arrows skip 5 s, j and l 15 s. The position is kept per audio in
// localStorage and resumed on the next visit.
//
// In an iframe it talks to the page around it (the loader, embed.js) by
// postMessage: it answers only the parent window, from the origin of its
// first "hello" (which must be location.ancestorOrigins[0] where the
// browser has it), and posts only to that origin; the height alone goes
// to any.
//
// A .np-message element with data-status-url is a player still waiting for
// its audio: it asks that URL now and then, plays the live stream once its
// first words are out, and reloads when it is ready.
(function () {
  "use strict";

  var SPEEDS = [0.75, 1, 1.25, 1.5, 1.75, 2];
  var SKIP = 15, STEP = 5;
  var SVG = "http://www.w3.org/2000/svg";

  // fmt shows seconds as m:ss, or h:mm:ss.
  function fmt(t) {
    if (!isFinite(t) || t < 0) t = 0;
    t = Math.floor(t);
    var h = Math.floor(t / 3600), m = Math.floor(t / 60) % 60, s = t % 60;
    var ss = (s < 10 ? "0" : "") + s;
    if (h > 0) return h + ":" + (m < 10 ? "0" : "") + m + ":" + ss;
    return m + ":" + ss;
  }

  function el(tag, cls, attrs) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }

  // icon returns an SVG icon drawn with one path.
  function icon(d) {
    var s = document.createElementNS(SVG, "svg");
    s.setAttribute("viewBox", "0 0 24 24");
    s.setAttribute("aria-hidden", "true");
    s.setAttribute("focusable", "false");
    var p = document.createElementNS(SVG, "path");
    p.setAttribute("d", d);
    s.appendChild(p);
    return s;
  }

  function button(cls, label, d) {
    var b = el("button", "np-btn " + cls, { type: "button", "aria-label": label });
    b.appendChild(icon(d));
    return b;
  }

  function start(audio) {
    var p = audio.play();
    if (p && p.catch) p.catch(function () {});
  }

  var PLAY = "M8 5v14l11-7z";
  var PAUSE = "M6 5h4v14H6zM14 5h4v14h-4z";
  var BACK = "M12 5V1L7 6l5 5V7c3.3 0 6 2.7 6 6s-2.7 6-6 6-6-2.7-6-6H4c0 4.4 3.6 8 8 8s8-3.6 8-8-3.6-8-8-8z";
  var FWD = "M12 5V1l5 5-5 5V7c-3.3 0-6 2.7-6 6s2.7 6 6 6 6-2.7 6-6h2c0 4.4-3.6 8-8 8s-8-3.6-8-8 3.6-8 8-8z";
  var NEXT = "M6 6l8.5 6L6 18zM16 6h2v12h-2z";
  var CLOSE = "M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z";

  // The page around the embed, once it said hello.
  var host = { origin: null, readalong: false, players: [] };

  function toHost(msg) {
    if (host.origin) window.parent.postMessage(msg, host.origin);
  }

  function listenHost() {
    if (window.parent === window) return;
    window.addEventListener("message", function (e) {
      var d = e.data;
      if (e.source !== window.parent || !d || typeof d.narrator !== "string") return;
      if (d.narrator === "hello" && !host.origin) {
        var anc = window.location.ancestorOrigins;
        if (anc && anc.length && anc[0] !== e.origin) return;
        host.origin = e.origin;
        host.readalong = !!d.readalong;
        host.players.forEach(function (p) { p.greet(); });
        return;
      }
      if (e.origin !== host.origin) return;
      host.players.forEach(function (p) { p.command(d); });
    });
  }

  // tracksOf returns what a player plays: its .np-item buttons, or the
  // audio its root describes.
  function tracksOf(root, audio) {
    function track(e, mp3) {
      return {
        mp3: mp3, hls: e.getAttribute("data-hls"), transcript: e.getAttribute("data-transcript"),
        id: e.getAttribute("data-audio"), duration: parseFloat(e.getAttribute("data-duration")) || 0,
        title: e.getAttribute("data-title") || "", author: e.getAttribute("data-author") || "",
        art: e.getAttribute("data-artwork"), item: e
      };
    }
    var items = root.querySelectorAll(".np-item");
    if (!items.length) return [track(root, audio.getAttribute("src"))];
    return Array.prototype.map.call(items, function (e) { return track(e, e.getAttribute("data-mp3")); });
  }

  function setup(root) {
    var audio = root.querySelector("audio");
    if (!audio || root.getAttribute("data-ready")) return;
    audio.removeAttribute("controls");
    audio.preload = "metadata";
    var p = { root: root, audio: audio, tracks: tracksOf(root, audio), index: 0, sentences: null };
    p.duration = function () {
      return isFinite(audio.duration) && audio.duration > 0 ? audio.duration : p.track.duration;
    };
    p.skip = function (by) {
      var d = p.duration(), t = audio.currentTime + by;
      audio.currentTime = Math.max(0, d ? Math.min(t, d) : t);
    };
    p.toggle = function () {
      if (audio.paused) start(audio); else audio.pause();
    };
    p.load = function (i, play) { load(p, i, play); };
    controls(p);
    keys(p);
    events(p);
    remember(p);
    session(p);
    playlist(p);
    hostLink(p);
    audio.addEventListener("error", function () {
      // The stream failed: the MP3 is the same audio.
      if (root.getAttribute("data-source") !== "hls") return;
      root.setAttribute("data-source", "mp3");
      audio.src = p.track.mp3;
      audio.load();
    });
    load(p, 0, false);
    root.setAttribute("data-ready", "true");
  }

  // load makes track i the one playing, and plays it if play.
  function load(p, i, play) {
    var root = p.root, audio = p.audio, tr = p.tracks[i];
    p.index = i;
    p.track = tr;
    var src = tr.mp3, source = "mp3";
    if (tr.hls && audio.canPlayType("application/vnd.apple.mpegurl")) {
      src = tr.hls;
      source = "hls";
    }
    root.setAttribute("data-source", source);
    root.setAttribute("data-track", String(i));
    if (tr.id) root.setAttribute("data-audio", tr.id);
    if (audio.getAttribute("src") !== src) audio.src = src;
    var title = root.querySelector(".np-title");
    if (title && tr.title) title.textContent = tr.title;
    p.tracks.forEach(function (t, j) {
      if (!t.item) return;
      if (j === i) t.item.setAttribute("aria-current", "true"); else t.item.removeAttribute("aria-current");
    });
    p.sentences = null;
    transcript(p, tr);
    p.emit("track");
    if (play) start(audio);
  }

  function controls(p) {
    var root = p.root, audio = p.audio;
    var bar = el("div", "np-controls", { role: "group", "aria-label": "Audio player" });
    var play = button("np-play", "Play", PLAY);
    var back = button("np-back", "Back " + SKIP + " seconds", BACK);
    back.appendChild(el("span", "np-skip-n", { "aria-hidden": "true" })).textContent = String(SKIP);
    var fwd = button("np-fwd", "Forward " + SKIP + " seconds", FWD);
    fwd.appendChild(el("span", "np-skip-n", { "aria-hidden": "true" })).textContent = String(SKIP);
    var seek = el("input", "np-seek", { type: "range", min: "0", max: "0", step: "0.1", value: "0", "aria-label": "Seek" });
    var time = el("span", "np-time", { "aria-hidden": "true" });
    var elapsed = time.appendChild(el("span", "np-elapsed"));
    time.appendChild(document.createTextNode(" / "));
    var total = time.appendChild(el("span", "np-total"));
    var speed = el("select", "np-speed", { "aria-label": "Playback speed" });
    SPEEDS.forEach(function (s) {
      var o = el("option", "", { value: String(s) });
      o.textContent = s + "×";
      if (s === 1) o.selected = true;
      speed.appendChild(o);
    });
    var parts = [play, back, fwd, seek, time, speed];
    if (p.tracks.length > 1) {
      var next = button("np-next", "Next audio", NEXT);
      next.addEventListener("click", function () { if (p.index + 1 < p.tracks.length) p.load(p.index + 1, true); });
      parts.splice(3, 0, next);
    }
    var dl = root.querySelector(".np-download");
    if (dl) parts.push(dl);
    var close = button("np-close", "Close the mini-player", CLOSE);
    close.addEventListener("click", function () {
      root.classList.remove("np-mini");
      toHost({ narrator: "dismiss" });
    });
    parts.push(close);
    parts.forEach(function (c) { bar.appendChild(c); });
    audio.insertAdjacentElement("afterend", bar);

    play.addEventListener("click", p.toggle);
    back.addEventListener("click", function () { p.skip(-SKIP); });
    fwd.addEventListener("click", function () { p.skip(SKIP); });
    seek.addEventListener("input", function () { audio.currentTime = parseFloat(seek.value) || 0; });
    speed.addEventListener("change", function () { audio.playbackRate = parseFloat(speed.value) || 1; });

    function showState() {
      var playing = !audio.paused && !audio.ended;
      play.setAttribute("aria-label", playing ? "Pause" : "Play");
      play.replaceChild(icon(playing ? PAUSE : PLAY), play.firstChild);
      root.classList.toggle("np-playing", playing);
    }
    function showTime() {
      var d = p.duration(), t = audio.currentTime;
      if (seek.max !== String(d)) seek.max = String(d);
      if (document.activeElement !== seek || audio.paused) seek.value = String(t);
      elapsed.textContent = fmt(t);
      total.textContent = fmt(d);
      seek.setAttribute("aria-valuetext", fmt(t) + " of " + fmt(d));
    }
    ["play", "pause", "ended"].forEach(function (ev) { audio.addEventListener(ev, showState); });
    ["timeupdate", "durationchange", "loadedmetadata", "emptied"].forEach(function (ev) { audio.addEventListener(ev, showTime); });
    audio.addEventListener("ratechange", function () {
      if (parseFloat(speed.value) !== audio.playbackRate) speed.value = String(audio.playbackRate);
    });
    var listeners = [];
    p.on = function (fn) { listeners.push(fn); };
    p.emit = function (what) {
      if (what === "track") showTime();
      listeners.forEach(function (fn) { fn(what); });
    };
  }

  // keys: space or k plays and pauses, the arrows skip STEP seconds, j and
  // l SKIP seconds; in an embed anywhere on its page.
  function keys(p) {
    var target = document.body.classList.contains("np-embed") ? document : p.root;
    target.addEventListener("keydown", function (e) {
      var t = e.target, tag = t.tagName || "";
      if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
      var field = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
      var control = field || tag === "BUTTON" || tag === "A" || (t.getAttribute && t.getAttribute("role") === "button");
      var sentences = t.closest && t.closest(".np-sentences");
      switch (e.key) {
        case " ": if (control) return; p.toggle(); break;
        case "k": if (field) return; p.toggle(); break;
        case "j": if (field) return; p.skip(-SKIP); break;
        case "l": if (field) return; p.skip(SKIP); break;
        case "ArrowLeft": if (field || sentences) return; p.skip(-STEP); break;
        case "ArrowRight": if (field || sentences) return; p.skip(STEP); break;
        default: return;
      }
      e.preventDefault();
    });
  }

  // events reports load, play, 25/50/75 % and complete, each once per
  // audio and page view, where data-events says.
  function events(p) {
    var root = p.root, audio = p.audio;
    var url = root.getAttribute("data-events");
    if (!url) return;
    var project = parseInt(root.getAttribute("data-project"), 10);
    var sent = {};
    function report(event) {
      var id = parseInt(p.track.id, 10);
      var key = id + ":" + event;
      if (sent[key] || !id) return;
      sent[key] = true;
      var body = JSON.stringify({ project_id: project, audio_id: id, event: event });
      // A beacon outlives the page; its string body goes as text/plain.
      if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return;
      fetch(url, { method: "POST", body: body, headers: { "Content-Type": "text/plain" }, keepalive: true, credentials: "omit" })
        .catch(function () {});
    }
    function played() { return sent[p.track.id + ":play"]; }
    p.on(function (what) { if (what === "track") report("load"); });
    audio.addEventListener("play", function () { report("play"); });
    audio.addEventListener("timeupdate", function () {
      var d = p.duration();
      if (!played() || !d) return;
      var f = audio.currentTime / d;
      if (f >= 0.25) report("progress_25");
      if (f >= 0.5) report("progress_50");
      if (f >= 0.75) report("progress_75");
    });
    audio.addEventListener("ended", function () {
      if (!played()) return;
      ["progress_25", "progress_50", "progress_75", "complete"].forEach(report);
    });
  }

  // remember keeps the position of each audio in localStorage, and resumes
  // it when the audio is loaded again; an audio heard to the end starts
  // over.
  function remember(p) {
    var audio = p.audio, saved = 0, pending = -1;
    function key() { return "narrator:position:" + (p.root.getAttribute("data-project") || "") + ":" + (p.track.id || p.track.mp3); }
    function store(t) {
      try {
        if (t > 0) window.localStorage.setItem(key(), String(Math.floor(t))); else window.localStorage.removeItem(key());
      } catch (e) { /* storage refused: nothing remembered */ }
    }
    p.on(function (what) {
      if (what !== "track") return;
      pending = -1;
      try { pending = parseFloat(window.localStorage.getItem(key())) || -1; } catch (e) { /* nothing kept */ }
      if (pending > 0 && audio.readyState >= 1) resume();
    });
    function resume() {
      var d = p.duration();
      if (pending > 3 && (!d || pending < d - 3) && audio.currentTime < 1) audio.currentTime = pending;
      pending = -1;
    }
    audio.addEventListener("loadedmetadata", resume);
    audio.addEventListener("timeupdate", function () {
      if (Math.abs(audio.currentTime - saved) >= 5) { saved = audio.currentTime; store(saved); }
    });
    audio.addEventListener("pause", function () { if (!audio.ended) store(audio.currentTime); });
    audio.addEventListener("ended", function () { saved = 0; store(0); });
  }

  // session gives the lock screen and the media keys the track's title,
  // author, site and image (p.meta, which the page around gets too), and
  // their controls.
  function session(p) {
    var ms = navigator.mediaSession, audio = p.audio, ok = ms && window.MediaMetadata;
    p.on(function (what) {
      if (what !== "track") return;
      var site = p.root.getAttribute("data-site") || "";
      p.meta = {
        title: p.track.title || document.title, artist: p.track.author || site, album: site,
        artwork: p.track.art ? [{ src: p.track.art }] : []
      };
      if (ok) ms.metadata = new window.MediaMetadata(p.meta);
    });
    if (!ok) return;
    var handlers = {
      play: function () { start(audio); },
      pause: function () { audio.pause(); },
      seekbackward: function (d) { p.skip(-((d && d.seekOffset) || SKIP)); },
      seekforward: function (d) { p.skip((d && d.seekOffset) || SKIP); },
      seekto: function (d) { audio.currentTime = d.seekTime; },
      previoustrack: function () {
        if (audio.currentTime < 3 && p.index > 0) p.load(p.index - 1, true); else audio.currentTime = 0;
      },
      nexttrack: function () { if (p.index + 1 < p.tracks.length) p.load(p.index + 1, true); }
    };
    Object.keys(handlers).forEach(function (k) {
      try { ms.setActionHandler(k, handlers[k]); } catch (e) { /* an action the browser does not know */ }
    });
  }

  // playlist plays the list's next audio when one ends, and any the
  // listener picks.
  function playlist(p) {
    if (p.tracks.length < 2) return;
    p.tracks.forEach(function (t, i) {
      t.item.addEventListener("click", function () { p.load(i, true); });
    });
    p.audio.addEventListener("ended", function () {
      if (p.index + 1 < p.tracks.length) p.load(p.index + 1, true);
    });
  }

  // hostLink tells the page around the embed where playback is, and gives
  // it the transcript for its read-along; it seeks and turns into the
  // mini-player when the page asks.
  function hostLink(p) {
    var audio = p.audio;
    function time() {
      toHost({ narrator: "time", track: p.index, t: audio.currentTime, playing: !audio.paused && !audio.ended, rate: audio.playbackRate });
    }
    function meta() { toHost({ narrator: "meta", meta: p.meta }); }
    p.greet = function () {
      if (host.readalong && p.sentences) toHost({ narrator: "transcript", track: p.index, sentences: p.sentences });
      meta();
      time();
    };
    p.command = function (d) {
      if (d.narrator === "seek" && typeof d.time === "number" && isFinite(d.time)) {
        audio.currentTime = Math.max(0, d.time + 0.001);
        if (d.play) start(audio);
      } else if (d.narrator === "mini") {
        p.root.classList.toggle("np-mini", !!d.on);
      }
    };
    p.on(function (what) {
      if (what === "transcript") p.greet(); else if (what === "track") meta();
    });
    ["play", "pause", "ended", "seeked", "ratechange", "timeupdate"].forEach(function (ev) { audio.addEventListener(ev, time); });
    host.players.push(p);
  }

  // transcript loads the track's transcript and follows playback in it.
  function transcript(p, tr) {
    var old = p.root.querySelector(".np-transcript");
    if (old) old.parentNode.removeChild(old);
    p.root.classList.remove("np-has-transcript");
    if (!tr.transcript || !window.fetch) return;
    fetch(tr.transcript, { credentials: "omit" })
      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.json(); })
      .then(function (data) {
        if (p.track !== tr || !data || !data.sentences || !data.sentences.length) return;
        p.sentences = data.sentences;
        build(p.root, p.audio, data.sentences);
        p.emit("transcript");
      })
      .catch(function () { /* no transcript: the player works without */ });
  }

  function build(root, audio, sentences) {
    var box = el("section", "np-transcript", { "aria-label": "Transcript" });
    var hint = el("p", "np-hint", { id: "np-hint-" + (root.id || "x") });
    hint.textContent = "Transcript · select a sentence to play from there";
    var list = el("div", "np-sentences");
    var spans = sentences.map(function (s, i) {
      var span = el("span", "np-s", { role: "button", tabindex: i === 0 ? "0" : "-1", "data-i": String(i), "aria-describedby": hint.id });
      span.textContent = s.text;
      list.appendChild(span);
      list.appendChild(document.createTextNode(" "));
      return span;
    });
    box.appendChild(hint);
    box.appendChild(list);
    var list0 = root.querySelector(".np-playlist");
    root.insertBefore(box, list0 && list0.parentNode === root ? list0 : null);
    root.classList.add("np-has-transcript");

    function seekTo(i) {
      audio.currentTime = sentences[i].start + 0.001;
      highlight();
      if (audio.paused) start(audio);
    }
    function focusAt(i) {
      i = Math.max(0, Math.min(spans.length - 1, i));
      spans.forEach(function (s, j) { s.setAttribute("tabindex", j === i ? "0" : "-1"); });
      spans[i].focus();
    }
    list.addEventListener("click", function (e) {
      var s = e.target.closest(".np-s");
      if (s) seekTo(parseInt(s.getAttribute("data-i"), 10));
    });
    list.addEventListener("keydown", function (e) {
      var s = e.target.closest(".np-s");
      if (!s) return;
      var i = parseInt(s.getAttribute("data-i"), 10);
      switch (e.key) {
        case "Enter":
        case " ":
          seekTo(i); break;
        case "ArrowDown":
        case "ArrowRight":
          focusAt(i + 1); break;
        case "ArrowUp":
        case "ArrowLeft":
          focusAt(i - 1); break;
        case "Home":
          focusAt(0); break;
        case "End":
          focusAt(spans.length - 1); break;
        default:
          return;
      }
      e.preventDefault();
    });

    // The sentence being spoken is the last one started: in the pause
    // after a sentence it stays lit.
    var current = -1;
    function highlight() {
      if (!box.parentNode) return;
      // Nothing is lit before the first play.
      var i = audio.paused && audio.currentTime === 0 ? -1 : at(sentences, audio.currentTime);
      if (i === current) return;
      if (current >= 0) {
        spans[current].classList.remove("np-active");
        spans[current].removeAttribute("aria-current");
      }
      current = i;
      root.setAttribute("data-sentence", String(i));
      if (i < 0) return;
      var s = spans[i];
      s.classList.add("np-active");
      s.setAttribute("aria-current", "true");
      if (list.contains(document.activeElement)) return; // do not move what a reader is moving
      spans.forEach(function (x, j) { x.setAttribute("tabindex", j === i ? "0" : "-1"); });
      // Scroll the transcript only, never the page around it. The list is
      // the sentences' offset parent.
      var top = s.offsetTop, bottom = top + s.offsetHeight;
      if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 3);
      }
    }
    var frame = 0;
    function loop() {
      highlight();
      frame = audio.paused || !box.parentNode ? 0 : window.requestAnimationFrame(loop);
    }
    audio.addEventListener("play", function () { if (!frame) frame = window.requestAnimationFrame(loop); });
    audio.addEventListener("timeupdate", highlight);
    audio.addEventListener("seeked", highlight);
    highlight();
  }

  // at returns the index of the last sentence started at t, or -1.
  function at(sentences, t) {
    var lo = 0, hi = sentences.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (sentences[mid].start <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found;
  }

  // waitForAudio asks the status URL now and then until the audio is no
  // longer being made, then reloads to show the player or the reason.
  // Once the audio's first words are out, it offers them at once: the live
  // stream, as an MP3 that grows while the rest is made. A listener who
  // started it keeps it to the end, with no reload.
  function waitForAudio(box) {
    var url = box.getAttribute("data-status-url");
    var delay = 1500;
    var live = null;
    function showLive(src) {
      if (live) return;
      live = document.createElement("audio");
      live.id = "np-live";
      live.controls = true;
      live.preload = "none";
      live.src = src;
      var text = box.querySelector(".np-message-text");
      if (text) text.textContent = "Listen now: the rest follows while it is prepared.";
      (text ? text.parentNode : box).appendChild(live);
    }
    function listening() { return live && (live.currentTime > 0 || !live.paused); }
    function tick() {
      fetch(url, { credentials: "omit", headers: { Accept: "application/json" } })
        .then(function (res) {
          if (res.status === 404) return { state: "not_found" };
          if (!res.ok) throw new Error(res.status);
          return res.json();
        })
        .then(function (s) {
          if (s.state === "unprocessed") {
            if (s.live_mp3_url) showLive(s.live_mp3_url);
            again();
            return;
          }
          box.setAttribute("data-state", s.state);
          if (s.state === "processed" && listening()) {
            var spin = box.querySelector(".np-spinner");
            if (spin) spin.hidden = true;
            return;
          }
          window.location.reload();
        })
        .catch(again);
    }
    function again() {
      setTimeout(tick, delay);
      // Quick while the live stream may start, slower after.
      delay = live ? Math.min(delay * 1.5, 30000) : Math.min(delay * 1.2, 5000);
    }
    again();
  }

  // The embed tells the page around it how tall it is, so that the loader
  // can size the iframe to fit. The height is all it says to any origin.
  function reportHeight() {
    if (window.parent === window || !document.body.classList.contains("np-embed")) return;
    var last = 0;
    function post() {
      var h = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (h === last) return;
      last = h;
      window.parent.postMessage({ narrator: "height", height: h }, "*");
    }
    post();
    if (window.ResizeObserver) new ResizeObserver(post).observe(document.documentElement);
  }

  function init() {
    listenHost();
    Array.prototype.forEach.call(document.querySelectorAll(".np"), function (root) {
      if (root.querySelector("audio")) setup(root);
    });
    var box = document.querySelector(".np-message[data-status-url]");
    if (box) waitForAudio(box);
    reportHeight();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
