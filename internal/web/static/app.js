// Narrator dashboard: small progressive enhancements. Every page works
// without this script; it adds voice filtering and previews, copy buttons
// and live state updates. The audio page's player is the embed's
// (/embed/player.js).
(function () {
  "use strict";

  // Voice pickers offer only the voices of the chosen language.
  function setupVoicePickers() {
    var lang = document.querySelector("[data-language-select]");
    if (!lang) return;
    var pickers = document.querySelectorAll("[data-voice-select]");
    function apply(resetToDefaults) {
      var code = lang.value;
      var opt = lang.options[lang.selectedIndex];
      pickers.forEach(function (sel) {
        sel.querySelectorAll("optgroup").forEach(function (g) {
          var on = g.getAttribute("data-language") === code;
          g.hidden = !on;
          g.disabled = !on;
        });
        var current = sel.options[sel.selectedIndex];
        if (resetToDefaults || !current || current.getAttribute("data-language") !== code) {
          var def = opt.getAttribute(sel.name === "title_voice" ? "data-title-voice" : "data-body-voice");
          for (var i = 0; i < sel.options.length; i++) {
            var o = sel.options[i];
            if (o.getAttribute("data-language") === code && o.value === def) { sel.selectedIndex = i; break; }
          }
        }
      });
    }
    lang.addEventListener("change", function () { apply(true); });
    apply(false);
  }

  // Preview buttons play a short sample of the picked voice.
  function setupPreviews() {
    var player = null;
    document.querySelectorAll("[data-preview]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var sel = document.getElementById(btn.getAttribute("data-preview"));
        var o = sel && sel.options[sel.selectedIndex];
        if (!o) return;
        var url = "/voices/" + encodeURIComponent(o.getAttribute("data-language")) + "/" +
          encodeURIComponent(o.value) + "/preview.mp3";
        if (player) { player.pause(); }
        player = new Audio(url);
        var label = btn.textContent;
        btn.textContent = "Loading…";
        btn.disabled = true;
        var done = function () { btn.textContent = label; btn.disabled = false; };
        player.addEventListener("playing", done, { once: true });
        player.addEventListener("error", function () { btn.textContent = "No preview"; setTimeout(done, 2000); }, { once: true });
        player.play().catch(function () { done(); });
      });
    });
  }

  // Copy buttons copy the value of the input they name.
  function setupCopy() {
    document.querySelectorAll("[data-copy]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var input = document.getElementById(btn.getAttribute("data-copy"));
        if (!input) return;
        var ok = function () {
          btn.textContent = "Copied";
          setTimeout(function () { btn.textContent = "Copy"; }, 1500);
        };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(input.value).then(ok, function () { input.select(); document.execCommand("copy"); ok(); });
        } else {
          input.select();
          document.execCommand("copy");
          ok();
        }
      });
    });
  }

  // fetchStatus GETs a status URL. It resolves to the list of states, or
  // to a string when polling must stop: "gone" when the project is gone
  // (404), "stop" when the session ended (the answer is a redirect to the
  // sign-in page) or access is refused.
  function fetchStatus(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        if (res.status === 404) return "gone";
        if (res.status === 401 || res.status === 403 || res.redirected) return "stop";
        if (!res.ok) throw new Error(res.status);
        var ct = res.headers.get("Content-Type") || "";
        if (ct.indexOf("application/json") !== 0) return "stop";
        return res.json();
      });
  }

  // The project page polls the state of its unprocessed rows and updates
  // them in place until they are done, deleted, or polling is refused.
  function setupRowUpdates() {
    var table = document.getElementById("audios");
    if (!table) return;
    var url = table.getAttribute("data-status-url");
    function pending() {
      return Array.prototype.slice.call(table.querySelectorAll('tr[data-state="unprocessed"]'));
    }
    function update(row, a) {
      row.setAttribute("data-state", a.state);
      var st = row.querySelector('[data-field="state"]');
      st.textContent = a.state_label;
      st.className = "badge badge-" + a.state;
      var hint = row.querySelector('[data-field="hint"]');
      if (hint) hint.hidden = a.state !== "unprocessed";
      if (a.duration) row.querySelector('[data-field="duration"]').textContent = a.duration;
      var up = row.querySelector('[data-field="updated"]');
      if (a.updated) { up.textContent = a.updated; up.setAttribute("datetime", a.updated_iso); }
      var err = row.querySelector('[data-field="error"]');
      err.textContent = a.error || "";
      err.hidden = !a.error;
      if (hint && a.progress) hint.textContent = a.progress.label;
    }
    function tick() {
      var rows = pending();
      if (rows.length === 0) return;
      var ids = rows.map(function (r) { return r.getAttribute("data-audio-id"); });
      fetchStatus(url + "?ids=" + ids.join(","))
        .then(function (list) {
          if (list === "stop") return;
          if (list === "gone") {
            // The project is gone: so are its audios.
            rows.forEach(function (row) { update(row, { state: "deleted", state_label: "Deleted" }); });
            return;
          }
          var seen = {};
          list.forEach(function (a) {
            seen[a.id] = true;
            var row = table.querySelector('tr[data-audio-id="' + a.id + '"]');
            if (row) update(row, a);
          });
          // An audio left out of the answer is gone.
          rows.forEach(function (row) {
            if (!seen[row.getAttribute("data-audio-id")]) update(row, { state: "deleted", state_label: "Deleted" });
          });
          schedule(1500);
        })
        .catch(function () { schedule(5000); });
    }
    function schedule(ms) { if (pending().length) setTimeout(tick, ms); }
    schedule(1000);
  }

  // The audio page shows how far its unprocessed audio has got, plays its
  // live stream once the first words are out, and reloads once the audio
  // is done, unless the live stream is playing: that one ends by itself,
  // complete. It says so, and stops polling, if the audio is deleted
  // meanwhile. The live stream is the growing MP3, which every browser
  // plays as it arrives; Chromium's own HLS player refuses a live
  // playlist, and hls.js would be a dependency loaded into the page.
  function setupAudioPending() {
    var el = document.getElementById("pending");
    if (!el) return;
    var url = el.getAttribute("data-status-url");
    var id = el.getAttribute("data-audio-id");
    var label = document.getElementById("progress-label");
    var bar = document.getElementById("progress-bar");
    var live = document.getElementById("live-player");
    var note = document.getElementById("live-note");
    var badge = document.getElementById("audio-state");
    function showLive(src) {
      if (!live || live.getAttribute("src")) return;
      live.src = src;
      live.hidden = false;
      if (note) note.textContent = "Playing while it is made: the rest follows as it is ready.";
    }
    function liveStarted() { return live && live.getAttribute("src") && (live.currentTime > 0 || !live.paused); }
    function gone() {
      el.textContent = "This audio was deleted.";
      el.setAttribute("data-state", "deleted");
      el.setAttribute("role", "status");
      if (badge) { badge.textContent = "Deleted"; badge.className = "badge badge-deleted"; }
    }
    function done(a) {
      if (!liveStarted()) { window.location.reload(); return; }
      // Keep the live stream playing; it now ends as the final audio.
      el.setAttribute("data-state", a.state);
      if (badge) { badge.textContent = a.state_label; badge.className = "badge badge-" + a.state; }
      if (label) label.textContent = a.state === "processed" ? "done" : a.state_label;
      if (bar) bar.value = 100;
      var spin = el.querySelector(".spinner");
      if (spin) spin.hidden = true;
      if (note) note.textContent = "Ready. Reload the page for the MP3 and the media URLs.";
    }
    function tick() {
      fetchStatus(url)
        .then(function (list) {
          if (list === "stop") return;
          var a = null;
          if (list !== "gone") list.forEach(function (x) { if (String(x.id) === id) a = x; });
          if (!a || a.state === "deleted") { gone(); return; }
          if (a.state !== "unprocessed") { done(a); return; }
          var p = a.progress;
          if (p) {
            if (label) label.textContent = p.label;
            if (bar) { bar.value = p.percent; bar.textContent = p.percent + " %"; }
            if (p.live_mp3_url) showLive(p.live_mp3_url);
          }
          setTimeout(tick, 1000);
        })
        .catch(function () { setTimeout(tick, 5000); });
    }
    if (live && live.getAttribute("data-live")) showLive(live.getAttribute("data-live"));
    setTimeout(tick, 1000);
  }

  // Links to a form field ("New project" → #p-title) move the focus there,
  // also in browsers that only scroll to a fragment.
  function setupFieldLinks() {
    function focusTarget() {
      var id = decodeURIComponent(window.location.hash.slice(1));
      var el = id && document.getElementById(id);
      if (el && /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName) && document.activeElement !== el) el.focus();
    }
    window.addEventListener("hashchange", focusTarget);
    document.querySelectorAll('a[href^="#"]').forEach(function (a) {
      a.addEventListener("click", function () { setTimeout(focusTarget, 0); });
    });
    focusTarget();
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupVoicePickers();
    setupPreviews();
    setupCopy();
    setupRowUpdates();
    setupAudioPending();
    setupFieldLinks();
  });
})();
