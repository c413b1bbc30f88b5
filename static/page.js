// What every page does with JavaScript, and does without it too: after a
// form error, focus moves to the summary of the errors (which is announced);
// badge snippets get a button that copies them.
(function () {
  "use strict";
  function ready(fn) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", fn);
    } else {
      fn();
    }
  }
  function wireCopyButtons() {
    var buttons = document.querySelectorAll("button.copy[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field || button.getAttribute("data-wired")) { return; }
      button.setAttribute("data-wired", "1");
      button.hidden = false;
      button.addEventListener("click", function () {
        var section = button.closest("section");
        var said = section ? section.querySelector(".copied") : null;
        var label = button.textContent.replace(/^Copy /, "");
        function tell(text) { if (said) { said.textContent = text; } }
        function fallback() {
          field.focus();
          field.select();
          var ok = false;
          try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
          tell(ok ? label + " copied." : "Select the " + label + " and copy it.");
        }
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(field.value).then(function () {
            tell(label + " copied.");
          }, fallback);
        } else {
          fallback();
        }
      });
    });
  }
  ready(function () {
    var summary = document.getElementById("error-summary");
    if (summary) { summary.focus(); }
    wireCopyButtons();
  });
  // A run page whose report replaced its progress (run.js).
  document.addEventListener("protocheck:content", wireCopyButtons);
})();
