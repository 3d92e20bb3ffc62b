// The explorer's only script: a range input marked data-autosubmit shows its value while
// it moves and reloads the page (submits its form) when released.
document.addEventListener("DOMContentLoaded", () => {
  for (const input of document.querySelectorAll("input[data-autosubmit]")) {
    const output = input.form.querySelector("output");
    input.addEventListener("input", () => {
      if (output) output.textContent = input.value + " / " + input.max;
    });
    input.addEventListener("change", () => input.form.submit());
  }
});
