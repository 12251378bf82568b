// Runs before the first paint (loaded in <head>): applies the saved theme, if any.
(function () {
  try {
    var t = localStorage.getItem("tidings-theme");
    if (t === "dark" || t === "light") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage may be disabled */ }
})();
