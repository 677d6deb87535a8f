"use strict";
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.status);
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.value);
      status.textContent = "Copied.";
    } catch (err) {
      source.select();
      status.textContent = "Could not copy: the key is selected, copy it yourself.";
    }
  });
}
