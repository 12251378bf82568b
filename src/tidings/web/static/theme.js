// Runs before the first paint (loaded in <head>): applies the saved theme, if any,
// and hides the note the user closed.
(function () {
  try {
    var t = localStorage.getItem("tidings-theme");
    if (t === "dark" || t === "light") document.documentElement.dataset.theme = t;
    // the "no admin password" note, once closed, stays hidden in this browser
    if (localStorage.getItem("tidings-banner") === "hidden") document.documentElement.dataset.banner = "hidden";
  } catch (e) { /* storage may be disabled */ }
})();
