// Live progress of a run: findings arrive over server-sent events and are
// appended as text (never as HTML: they carry target-controlled strings).
// When the verdict arrives, the page reloads to show the finished report.
(function () {
  "use strict";
  var section = document.querySelector("section.progress");
  if (!section || !window.EventSource) { return; }
  var id = section.getAttribute("data-run");
  var total = parseInt(section.getAttribute("data-total"), 10) || 0;
  var bar = document.getElementById("bar");
  var done = document.getElementById("done");
  var live = document.getElementById("live");
  var count = 0;
  live.hidden = false;
  while (live.firstChild) { live.removeChild(live.firstChild); }
  var source = new EventSource("/api/v1/runs/" + encodeURIComponent(id) + "/events");
  source.addEventListener("finding", function (event) {
    var f;
    try { f = JSON.parse(event.data); } catch (e) { return; }
    count += 1;
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
    // A moment at 100 % before the report replaces the progress view.
    window.setTimeout(function () { window.location.reload(); }, 1000);
  });
})();
