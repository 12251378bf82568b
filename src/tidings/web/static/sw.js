// tidings service worker (R-UI-5): the app shell, the last 20 articles read, and the
// last pages seen are kept, so reading works offline. Writes are not handled here:
// app.js queues read/star changes and replays them when the network is back.
"use strict";
var SHELL = "tidings-shell-v1", ARTICLES = "tidings-articles-v1", PAGES = "tidings-pages-v1";
var KEEP_ARTICLES = 20, KEEP_PAGES = 10;
var SHELL_URLS = ["/offline", "/static/app.css", "/static/app.js", "/static/theme.js",
  "/static/icon.svg", "/static/icon-192.png", "/manifest.webmanifest"];

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(SHELL).then(function (c) { return c.addAll(SHELL_URLS); })
    .then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  var keep = [SHELL, ARTICLES, PAGES];
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (n) { return keep.indexOf(n) < 0; })
      .map(function (n) { return caches.delete(n); }));
  }).then(function () { return self.clients.claim(); }));
});

function trim(cacheName, max) {
  return caches.open(cacheName).then(function (cache) {
    return cache.keys().then(function (keys) {
      // keys come back oldest first: entries are re-put on every visit
      return Promise.all(keys.slice(0, Math.max(0, keys.length - max))
        .map(function (k) { return cache.delete(k); }));
    });
  });
}

function remember(cacheName, max, request, response) {
  return caches.open(cacheName).then(function (cache) {
    return cache.delete(request, { ignoreSearch: cacheName === ARTICLES })
      .then(function () { return cache.put(request, response); });
  }).then(function () { return trim(cacheName, max); });
}

function networkFirst(event, cacheName, max) {
  var request = event.request;
  return fetch(request).then(function (response) {
    if (response.ok && response.type === "basic") {
      event.waitUntil(remember(cacheName, max, request, response.clone()));
    }
    return response;
  }, function () {
    return caches.match(request, { ignoreSearch: cacheName === ARTICLES }).then(function (hit) {
      return hit || caches.match("/offline");
    });
  });
}

function staleWhileRevalidate(event) {
  return caches.open(SHELL).then(function (cache) {
    return cache.match(event.request).then(function (hit) {
      var fresh = fetch(event.request).then(function (response) {
        if (response.ok) cache.put(event.request, response.clone());
        return response;
      });
      if (hit) { event.waitUntil(fresh.catch(function () { return null; })); return hit; }
      return fresh;
    });
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  var url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.indexOf("/api/") === 0 || url.pathname === "/sw.js") return;
  if (url.pathname.indexOf("/static/") === 0 || url.pathname === "/manifest.webmanifest") {
    event.respondWith(staleWhileRevalidate(event));
  } else if (request.mode === "navigate" && /^\/item\/\d+$/.test(url.pathname)) {
    event.respondWith(networkFirst(event, ARTICLES, KEEP_ARTICLES));
  } else if (request.mode === "navigate") {
    event.respondWith(networkFirst(event, PAGES, KEEP_PAGES));
  }
});
