// Narrator player. It turns each .np element that holds an <audio> into a
// player: play and pause, skip 15 s, a seek bar, the speed, elapsed and
// total time, and the read-along transcript, whose sentence being spoken is
// highlighted and can be clicked to play from there. Without this script
// the <audio> keeps the browser's own controls.
//
// The element's data attributes say what to load:
//   data-hls         the HLS playlist, used where the browser plays HLS itself
//   data-transcript  the transcript JSON: {"duration", "sentences": [{"start", "end", "text"}]}
//   data-duration    the length in seconds, until the audio's own is known
//   data-events      where to report listening events ("" for nowhere),
//                    with data-project and data-audio
//
// A .np-message element with data-status-url is a player still waiting for
// its audio: it asks that URL now and then, plays the live stream once its
// first words are out, and reloads when it is ready.
(function () {
  "use strict";

  var SPEEDS = [0.75, 1, 1.25, 1.5, 1.75, 2];
  var SKIP = 15;
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

  var PLAY = "M8 5v14l11-7z";
  var PAUSE = "M6 5h4v14H6zM14 5h4v14h-4z";
  var BACK = "M12 5V1L7 6l5 5V7c3.3 0 6 2.7 6 6s-2.7 6-6 6-6-2.7-6-6H4c0 4.4 3.6 8 8 8s8-3.6 8-8-3.6-8-8-8z";
  var FWD = "M12 5V1l5 5-5 5V7c-3.3 0-6 2.7-6 6s2.7 6 6 6 6-2.7 6-6h2c0 4.4-3.6 8-8 8s-8-3.6-8-8 3.6-8 8-8z";

  function setup(root) {
    var audio = root.querySelector("audio");
    if (!audio || root.getAttribute("data-ready")) return;
    var mp3 = audio.getAttribute("src");
    var hls = root.getAttribute("data-hls");
    var source = "mp3";
    if (hls && audio.canPlayType("application/vnd.apple.mpegurl")) {
      source = "hls";
      audio.addEventListener("error", function fallback() {
        // The stream failed: the MP3 is the same audio.
        audio.removeEventListener("error", fallback);
        source = "mp3";
        root.setAttribute("data-source", source);
        audio.src = mp3;
        audio.load();
      });
      audio.src = hls;
    }
    root.setAttribute("data-source", source);
    audio.removeAttribute("controls");
    audio.preload = "metadata";

    var known = parseFloat(root.getAttribute("data-duration")) || 0;
    function duration() {
      return isFinite(audio.duration) && audio.duration > 0 ? audio.duration : known;
    }

    // Controls.
    var bar = el("div", "np-controls", { role: "group", "aria-label": "Audio player" });
    var play = el("button", "np-btn np-play", { type: "button", "aria-label": "Play" });
    play.appendChild(icon(PLAY));
    var back = el("button", "np-btn np-back", { type: "button", "aria-label": "Back " + SKIP + " seconds" });
    back.appendChild(icon(BACK));
    back.appendChild(el("span", "np-skip-n", { "aria-hidden": "true" })).textContent = String(SKIP);
    var fwd = el("button", "np-btn np-fwd", { type: "button", "aria-label": "Forward " + SKIP + " seconds" });
    fwd.appendChild(icon(FWD));
    fwd.appendChild(el("span", "np-skip-n", { "aria-hidden": "true" })).textContent = String(SKIP);
    var seek = el("input", "np-seek", { type: "range", min: "0", max: String(duration() || 0), step: "0.1", value: "0", "aria-label": "Seek" });
    var time = el("span", "np-time", { "aria-hidden": "true" });
    var elapsed = el("span", "np-elapsed");
    var total = el("span", "np-total");
    elapsed.textContent = "0:00";
    total.textContent = fmt(duration());
    time.appendChild(elapsed);
    time.appendChild(document.createTextNode(" / "));
    time.appendChild(total);
    var speed = el("select", "np-speed", { "aria-label": "Playback speed" });
    SPEEDS.forEach(function (s) {
      var o = el("option", "", { value: String(s) });
      o.textContent = s + "×";
      if (s === 1) o.selected = true;
      speed.appendChild(o);
    });
    [play, back, fwd, seek, time, speed].forEach(function (c) { bar.appendChild(c); });
    audio.insertAdjacentElement("afterend", bar);

    function skip(by) {
      var d = duration();
      var t = audio.currentTime + by;
      audio.currentTime = Math.max(0, d ? Math.min(t, d) : t);
    }
    function toggle() {
      if (audio.paused) {
        var p = audio.play();
        if (p && p.catch) p.catch(function () {});
      } else {
        audio.pause();
      }
    }
    play.addEventListener("click", toggle);
    back.addEventListener("click", function () { skip(-SKIP); });
    fwd.addEventListener("click", function () { skip(SKIP); });
    seek.addEventListener("input", function () { audio.currentTime = parseFloat(seek.value) || 0; });
    speed.addEventListener("change", function () { audio.playbackRate = parseFloat(speed.value) || 1; });
    root.addEventListener("keydown", function (e) {
      var tag = e.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === "k") { toggle(); e.preventDefault(); }
      if (e.key === "j") { skip(-SKIP); e.preventDefault(); }
      if (e.key === "l") { skip(SKIP); e.preventDefault(); }
    });

    function showState() {
      var playing = !audio.paused && !audio.ended;
      play.setAttribute("aria-label", playing ? "Pause" : "Play");
      play.replaceChild(icon(playing ? PAUSE : PLAY), play.firstChild);
      root.classList.toggle("np-playing", playing);
    }
    function showTime() {
      var d = duration(), t = audio.currentTime;
      if (d && seek.max !== String(d)) seek.max = String(d);
      if (document.activeElement !== seek || audio.paused) seek.value = String(t);
      elapsed.textContent = fmt(t);
      total.textContent = fmt(d);
      seek.setAttribute("aria-valuetext", fmt(t) + " of " + fmt(d));
    }
    audio.addEventListener("play", showState);
    audio.addEventListener("pause", showState);
    audio.addEventListener("ended", showState);
    audio.addEventListener("timeupdate", showTime);
    audio.addEventListener("durationchange", showTime);
    audio.addEventListener("loadedmetadata", showTime);
    audio.addEventListener("ratechange", function () {
      if (parseFloat(speed.value) !== audio.playbackRate) speed.value = String(audio.playbackRate);
    });
    showTime();

    setupEvents(root, audio, duration);
    setupTranscript(root, audio);
    root.setAttribute("data-ready", "true");
  }

  // setupEvents reports load, play, 25/50/75 % and complete, each once per
  // page view, where data-events says.
  function setupEvents(root, audio, duration) {
    var url = root.getAttribute("data-events");
    if (!url) return;
    var project = parseInt(root.getAttribute("data-project"), 10);
    var id = parseInt(root.getAttribute("data-audio"), 10);
    var sent = {};
    function report(event) {
      if (sent[event]) return;
      sent[event] = true;
      var body = JSON.stringify({ project_id: project, audio_id: id, event: event });
      // A beacon outlives the page; its string body goes as text/plain.
      if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return;
      fetch(url, { method: "POST", body: body, headers: { "Content-Type": "text/plain" }, keepalive: true, credentials: "omit" })
        .catch(function () {});
    }
    report("load");
    audio.addEventListener("play", function () { report("play"); });
    audio.addEventListener("timeupdate", function () {
      var d = duration();
      if (!sent.play || !d) return;
      var f = audio.currentTime / d;
      if (f >= 0.25) report("progress_25");
      if (f >= 0.5) report("progress_50");
      if (f >= 0.75) report("progress_75");
    });
    audio.addEventListener("ended", function () {
      if (!sent.play) return;
      report("progress_25");
      report("progress_50");
      report("progress_75");
      report("complete");
    });
  }

  // setupTranscript loads the transcript and follows playback in it.
  function setupTranscript(root, audio) {
    var url = root.getAttribute("data-transcript");
    if (!url || !window.fetch) return;
    fetch(url, { credentials: "omit" })
      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.json(); })
      .then(function (tr) {
        if (!tr || !tr.sentences || !tr.sentences.length) return;
        build(root, audio, tr.sentences);
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
    root.appendChild(box);
    root.classList.add("np-has-transcript");

    function seekTo(i) {
      audio.currentTime = sentences[i].start + 0.001;
      highlight();
      if (audio.paused) {
        var p = audio.play();
        if (p && p.catch) p.catch(function () {});
      }
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
    function at(t) {
      var lo = 0, hi = sentences.length - 1, found = -1;
      while (lo <= hi) {
        var mid = (lo + hi) >> 1;
        if (sentences[mid].start <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
      }
      return found;
    }
    function highlight() {
      // Nothing is lit before the first play.
      var i = audio.paused && audio.currentTime === 0 ? -1 : at(audio.currentTime);
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
      frame = audio.paused ? 0 : window.requestAnimationFrame(loop);
    }
    audio.addEventListener("play", function () { if (!frame) frame = window.requestAnimationFrame(loop); });
    audio.addEventListener("timeupdate", highlight);
    audio.addEventListener("seeked", highlight);
    highlight();
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
  // can size the iframe to fit.
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

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".np"), function (root) {
      if (root.querySelector("audio")) setup(root);
    });
    var box = document.querySelector(".np-message[data-status-url]");
    if (box) waitForAudio(box);
    reportHeight();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
