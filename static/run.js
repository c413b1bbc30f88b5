// Live progress of a run: findings arrive over server-sent events and are
// appended as text (never as HTML: they carry target-controlled strings).
// The status and the verdict are announced once each, through the page's
// status region. When the verdict arrives, the finished report replaces the
// page's content in place (no reload: a screen reader keeps its place and
// reads the verdict); without JavaScript the page offers a link to reload.
(function () {
  "use strict";
  var section = document.querySelector("section.progress");
  if (!section || !window.EventSource) { return; }
  var id = section.getAttribute("data-run");
  var total = parseInt(section.getAttribute("data-total"), 10) || 0;
  var bar = document.getElementById("bar");
  var done = document.getElementById("done");
  var live = document.getElementById("live");
  var statusWord = document.getElementById("status-word");
  // The announcer stays on the page when the report replaces the content.
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  document.body.appendChild(announcer);
  var told = {};
  function announce(key, text) {
    if (told[key]) { return; }
    told[key] = true;
    announcer.textContent = text;
  }
  function setStatus(word) {
    if (statusWord && statusWord.textContent !== word) {
      statusWord.textContent = word;
      announce("status-" + word, "Status: " + word + ".");
    }
  }
  var count = 0;
  live.hidden = false;
  while (live.firstChild) { live.removeChild(live.firstChild); }
  var source = new EventSource("/api/v1/runs/" + encodeURIComponent(id) + "/events");
  source.addEventListener("finding", function (event) {
    var f;
    try { f = JSON.parse(event.data); } catch (e) { return; }
    count += 1;
    setStatus("running");
    var item = document.createElement("li");
    item.className = "finding " + String(f.outcome);
    var pill = document.createElement("span");
    pill.className = "pill " + String(f.outcome);
    pill.textContent = String(f.outcome);
    var rule = document.createElement("strong");
    rule.textContent = " " + String(f.rule_id) + " ";
    var message = document.createElement("p");
    message.className = "message";
    message.textContent = String(f.message);
    item.appendChild(pill);
    item.appendChild(rule);
    item.appendChild(message);
    live.appendChild(item);
    if (total > 0) { bar.max = total; bar.value = Math.min(count, total); }
    done.textContent = count + " of " + (total > 0 ? total : "?") + " rules checked";
  });
  // While the run is queued: its place and what it waits for (text only).
  var queue = document.getElementById("queue");
  source.addEventListener("queue", function (event) {
    var q;
    try { q = JSON.parse(event.data); } catch (e) { return; }
    if (!queue) { return; }
    if (!q) { queue.hidden = true; queue.textContent = ""; return; }
    queue.hidden = false;
    queue.textContent = "Number " + String(q.position) + " in the queue, waiting for " +
      String(q.waiting_for) + (q.not_before ? "; not before " + String(q.not_before) : "") + ".";
  });
  source.addEventListener("restart", function () {
    count = 0;
    while (live.firstChild) { live.removeChild(live.firstChild); }
  });
  source.addEventListener("verdict", function () {
    source.close();
    if (total > 0) { bar.max = total; bar.value = total; }
    done.textContent = "All rules checked; loading the report…";
    // A moment at 100 %, then the report, which is this page rendered by
    // protocheck (every target string in it escaped): its main content
    // replaces this one's.
    window.setTimeout(showReport, 1000);
  });
  function showReport() {
    fetch(window.location.href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (resp) {
        if (!resp.ok) { throw new Error("HTTP " + resp.status); }
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var main = document.getElementById("main");
        var next = doc.getElementById("main");
        if (!main || !next || doc.querySelector("section.progress")) {
          throw new Error("the run has not ended yet");
        }
        while (main.firstChild) { main.removeChild(main.firstChild); }
        while (next.firstChild) { main.appendChild(document.adoptNode(next.firstChild)); }
        document.title = doc.title;
        var pill = main.querySelector("section.verdict .headline");
        var why = main.querySelector("section.verdict .why");
        announce("verdict", "Run finished. Verdict: " +
          (pill ? pill.textContent.trim() : "see the report") +
          (why ? ". " + why.textContent.trim() : "."));
        // The report's own script (copy buttons) runs on what it finds at
        // load: show the copy buttons of the new content the same way.
        document.dispatchEvent(new Event("protocheck:content"));
      })
      .catch(function () {
        window.location.reload();
      });
  }
})();
