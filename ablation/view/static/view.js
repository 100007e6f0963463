// ablation view: the page's only script. It never writes markup: text goes in through
// textContent, and a finished campaign's page is reloaded from the server.
"use strict";

// A filter list applies a choice made with the pointer at once. A choice made with the keyboard
// (arrow keys, typing, Home/End, which change a closed list's value at each key) waits for Enter
// or the form's button, so the next key still moves through the list.
function autosubmit() {
  for (const select of document.querySelectorAll("select.autosubmit")) {
    let keyed = false;
    select.addEventListener("pointerdown", () => { keyed = false; });
    select.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        select.form.submit();
        return;
      }
      if (event.key !== "Tab") keyed = true;
    });
    select.addEventListener("change", () => {
      if (!keyed) select.form.submit();
    });
  }
}

function follow(endpoint) {
  const status = document.getElementById("status");
  const trials = document.getElementById("trials");
  const poll = async () => {
    try {
      const response = await fetch(endpoint, { cache: "no-store" });
      if (!response.ok) return;
      const data = await response.json();
      if (trials) trials.textContent = String(data.trials);
      if (status) status.textContent = String(data.status);
      if (data.status !== "running") {
        window.location.reload();
        return;
      }
    } catch (err) {
      // the server may be restarting: try again at the next tick
    }
    window.setTimeout(poll, 1000);
  };
  window.setTimeout(poll, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  autosubmit();
  const endpoint = document.body.dataset.progress;
  if (endpoint) follow(endpoint);
});
