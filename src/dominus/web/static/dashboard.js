// DOMINUS's own few lines (no framework): a "select all" box ticks the boxes of its form, and a
// live list holds still while something in it is ticked, so a refresh never drops a selection.
// Everything works without it: the pages offer a "select all" link, and only live parts need JS.
document.addEventListener("change", function (event) {
  var box = event.target;
  if (!box.matches || !box.matches("input[data-select-all]")) return;
  var scope = box.form || document;
  var boxes = scope.querySelectorAll('input[type="checkbox"][name="' + box.dataset.selectAll + '"]');
  boxes.forEach(function (each) { each.checked = box.checked; });
});
document.addEventListener("htmx:sseBeforeMessage", function (event) {
  var region = event.target.closest && event.target.closest("[data-hold-while-selected]");
  if (region && region.querySelector('input[type="checkbox"]:checked')) event.preventDefault();
});
