// ablation view: the page's only script. It never writes markup: text goes in through
// textContent, and a finished campaign's page is reloaded from the server.
"use strict";

function autosubmit() {
  for (const select of document.querySelectorAll("select.autosubmit")) {
    select.addEventListener("change", () => select.form.submit());
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
