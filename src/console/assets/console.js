/* global document, window, fetch, HTMLFormElement, CustomEvent */
// The console's only script: progressive bits on top of pages that work without it.
// Served as a file (the Content-Security-Policy forbids inline scripts).
(function () {
  "use strict";

  function csrf() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") || "" : "";
  }

  // Forms marked data-confirm ask before they are sent (a live run changes products).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // Live regions: an element with data-poll-url is refreshed with the HTML fragment that URL answers,
  // every data-poll-ms milliseconds (2000 by default), until the answer carries X-Poll-Done: 1.
  function poll(element) {
    var url = element.getAttribute("data-poll-url");
    var every = Number(element.getAttribute("data-poll-ms")) || 2000;
    if (!url) return;
    var timer = window.setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html", "X-Requested-With": "conveyor-console" } })
        .then(function (res) {
          if (res.headers.get("X-Poll-Done") === "1") window.clearInterval(timer);
          if (!res.ok) {
            window.clearInterval(timer);
            return null;
          }
          return res.text();
        })
        .then(function (text) {
          if (text !== null) element.innerHTML = text;
          element.dispatchEvent(new CustomEvent("conveyor:updated", { bubbles: true }));
        })
        .catch(function () {
          window.clearInterval(timer);
        });
    }, every);
  }

  // For other scripts of the console: a POST that carries the session's CSRF token.
  window.conveyorConsole = {
    csrf: csrf,
    poll: poll,
    post: function (url, body) {
      return fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
        body: JSON.stringify(body || {}),
      });
    },
  };

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-poll-url]").forEach(poll);
  });
})();
