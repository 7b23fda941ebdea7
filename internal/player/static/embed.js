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
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var origin = new URL(script.src, document.baseURI).origin;
  var project = script.getAttribute("data-project");
  if (!project || !/^[0-9]+$/.test(project)) {
    if (window.console) console.error("Narrator embed: data-project must be the project's ID");
    return;
  }
  var query;
  var ext = script.getAttribute("data-external-id");
  if (ext) {
    query = "external_id=" + encodeURIComponent(ext);
  } else {
    var url = script.getAttribute("data-url");
    if (!url) {
      var canonical = document.querySelector('link[rel="canonical"]');
      url = canonical && canonical.href ? canonical.href : window.location.href;
    }
    query = "url=" + encodeURIComponent(url.split("#")[0]);
  }
  var token = script.getAttribute("data-token");
  if (token) query += "&token=" + encodeURIComponent(token);
  query += "&origin=" + encodeURIComponent(window.location.origin);
  var frame = document.createElement("iframe");
  frame.src = origin + "/embed/" + project + "?" + query;
  frame.title = script.getAttribute("data-title") || "Listen to this article";
  frame.setAttribute("allow", "autoplay");
  frame.className = "narrator-player";
  frame.style.width = "100%";
  frame.style.height = "140px";
  frame.style.border = "0";
  frame.style.display = "block";
  script.parentNode.insertBefore(frame, script.nextSibling);
  // The player says how tall it is; only messages from this frame count.
  window.addEventListener("message", function (e) {
    if (e.source !== frame.contentWindow || e.origin !== origin) return;
    var d = e.data;
    if (d && d.narrator === "height" && typeof d.height === "number" && d.height > 0 && d.height < 5000) {
      frame.style.height = Math.ceil(d.height) + "px";
    }
  });
})();
