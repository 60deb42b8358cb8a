window.__amErrors = 0;
window.__amNoteError = function () {
  window.__amErrors++;
  var e = document.getElementById('js-errors');
  if (e) e.textContent = String(window.__amErrors);
};
window.addEventListener('error', window.__amNoteError);
window.addEventListener('unhandledrejection', window.__amNoteError);
