// tidings reader: keyboard shortcuts, read/star without reloads, offline queue.
// Plain JavaScript, no build step; every page works without it (R-UI-1).
"use strict";
(function () {
  var QUEUE = "tidings-queue", RECENT = "tidings-recent", THEME = "tidings-theme";
  var doc = document, root = doc.documentElement;
  var isAdmin = doc.body.dataset.admin === "1";
  var csrfMeta = doc.querySelector('meta[name="csrf"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  function load(key, fallback) {
    try { var v = JSON.parse(localStorage.getItem(key)); return v === null ? fallback : v; }
    catch (e) { return fallback; }
  }
  function save(key, value) {
    try { localStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* full or disabled */ }
  }
  var toastTimer = 0;
  function toast(text) {
    var el = doc.getElementById("toast");
    if (!el) return;
    el.textContent = text; el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { el.hidden = true; }, 2200);
  }

  // ---------------------------------------------------------------- theme
  var themeBtn = doc.getElementById("theme-toggle");
  function showTheme() {
    var t = root.dataset.theme || "system";
    if (themeBtn) {
      themeBtn.textContent = t === "dark" ? "☾" : t === "light" ? "☀" : "◐";
      themeBtn.title = "Theme: " + (t === "system" ? "follows the system" : t) + " (t)";
    }
  }
  function cycleTheme() {
    var t = root.dataset.theme || "system";
    var next = t === "system" ? "dark" : t === "dark" ? "light" : "system";
    if (next === "system") { delete root.dataset.theme; localStorage.removeItem(THEME); }
    else { root.dataset.theme = next; localStorage.setItem(THEME, next); }
    showTheme();
    toast("Theme: " + (next === "system" ? "follows the system" : next));
  }
  if (themeBtn) { themeBtn.hidden = false; themeBtn.addEventListener("click", cycleTheme); }
  showTheme();

  // ----------------------------------------------------------------- help
  var help = doc.getElementById("help");
  var helpBtn = doc.getElementById("help-toggle");
  function toggleHelp(show) {
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
    if (!help.hidden) doc.getElementById("help-close").focus();
  }
  if (helpBtn) { helpBtn.hidden = false; helpBtn.addEventListener("click", function () { toggleHelp(); }); }
  if (help) {
    doc.getElementById("help-close").addEventListener("click", function () { toggleHelp(false); });
    help.addEventListener("click", function (e) { if (e.target === help) toggleHelp(false); });
  }

  // ------------------------------------------- sidebar, drawer, banner
  var FOLDS = "tidings-folds", body = doc.body;
  var sidebar = doc.getElementById("sidebar");
  function drawer(open) {
    body.classList.toggle("drawer-open", open);
    if (!open && location.hash === "#sidebar") history.replaceState(null, "", location.pathname + location.search);
  }
  var toggle = doc.getElementById("drawer-toggle");
  if (toggle) toggle.addEventListener("click", function (e) { e.preventDefault(); drawer(!body.classList.contains("drawer-open")); });
  Array.prototype.forEach.call(doc.querySelectorAll("#drawer-close, .drawer-shade"), function (el) {
    el.addEventListener("click", function (e) { e.preventDefault(); drawer(false); });
  });
  if (sidebar) {
    var folded = load(FOLDS, []);
    Array.prototype.forEach.call(sidebar.querySelectorAll("details.folder"), function (d) {
      if (folded.indexOf(d.dataset.folder) >= 0) d.open = false;
      d.addEventListener("toggle", function () {
        var now = load(FOLDS, []).filter(function (n) { return n !== d.dataset.folder; });
        if (!d.open) now.push(d.dataset.folder);
        save(FOLDS, now.slice(-200));
      });
    });
  }
  // next / previous source in the sidebar's order (J / K), from the current one
  function nextSource(step) {
    if (!sidebar) return false;
    var links = Array.prototype.slice.call(sidebar.querySelectorAll("a[data-source]"));
    if (!links.length) return false;
    var at = -1;
    links.forEach(function (a, i) { if (a.getAttribute("aria-current") === "page") at = i; });
    var to = at < 0 ? (step > 0 ? 0 : links.length - 1) : Math.max(0, Math.min(links.length - 1, at + step));
    if (to === at) { toast(step > 0 ? "Last source" : "First source"); return true; }
    location.href = links[to].href;
    return true;
  }
  // after a change of read or star state, the sidebar's counts as the server has them now
  var countTimer = 0;
  function setCount(el, n) { if (el) el.textContent = n ? String(n) : ""; }
  function showCounts(c) {
    ["today", "all", "starred", "trending"].forEach(function (v) {
      setCount(sidebar.querySelector('[data-count="' + v + '"]'), c[v]);
    });
    var unread = {};
    Array.prototype.forEach.call(sidebar.querySelectorAll("details.folder"), function (d) {
      var f = c.folders.filter(function (x) { return x.name === d.dataset.folder; })[0];
      setCount(d.querySelector("summary .count"), f ? f.unread : 0);
      d.querySelector("summary a").classList.toggle("none", !(f && f.unread));
    });
    c.folders.forEach(function (f) { f.sources.forEach(function (x) { unread[x.id] = x.unread; }); });
    c.sources.forEach(function (x) { unread[x.id] = x.unread; });
    Array.prototype.forEach.call(sidebar.querySelectorAll("a[data-source]"), function (a) {
      var n = unread[a.dataset.source] || 0;
      setCount(a.querySelector(".count"), n);
      a.classList.toggle("none", !n);
    });
  }
  function refreshCounts() {
    if (!sidebar) return;
    clearTimeout(countTimer);
    countTimer = setTimeout(function () {
      fetch("/api/v1/counts", { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (c) { if (c) showCounts(c); }, function () { /* offline: kept */ });
    }, 250);
  }
  var banner = doc.getElementById("banner"), bannerClose = doc.getElementById("banner-close");
  if (banner && bannerClose) {
    bannerClose.hidden = false;
    bannerClose.addEventListener("click", function () {
      root.dataset.banner = "hidden";
      try { localStorage.setItem("tidings-banner", "hidden"); } catch (e) { /* disabled */ }
    });
  }

  // ------------------------------------------------ state changes + queue
  function send(ids, change) {
    var body = { ids: ids };
    if (change.read !== undefined) body.read = change.read;
    if (change.starred !== undefined) body.starred = change.starred;
    return fetch("/api/v1/items/state", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    });
  }
  function enqueue(ids, change) {
    var q = load(QUEUE, []);
    q.push({ ids: ids, change: change, at: Date.now() });
    save(QUEUE, q.slice(-500));
  }
  // Send a change; when the network (or the server) is away, keep it for later.
  function change(ids, ch) {
    if (!isAdmin) { toast("Log in to change read and star state"); return Promise.resolve(false); }
    if (load(QUEUE, []).length) { enqueue(ids, ch); flush(); return Promise.resolve(true); }
    return send(ids, ch).then(function (r) {
      if (r.ok) { refreshCounts(); return true; }
      if (r.status >= 500) { enqueue(ids, ch); toast("Saved offline; will sync"); return true; }
      toast(r.status === 403 ? "Session expired: reload the page" : "Could not save (" + r.status + ")");
      return false;
    }, function () { enqueue(ids, ch); toast("Offline: saved, will sync"); return true; });
  }
  var flushing = false;
  function flush() {
    if (flushing) return;
    var q = load(QUEUE, []);
    if (!q.length) return;
    flushing = true;
    var op = q[0];
    send(op.ids, op.change).then(function (r) {
      flushing = false;
      if (r.ok || (r.status >= 400 && r.status < 500 && r.status !== 401 && r.status !== 403)) {
        var rest = load(QUEUE, []); rest.shift(); save(QUEUE, rest);
        if (rest.length) flush(); else toast("Offline changes synced");
      }
    }, function () { flushing = false; });
  }
  window.addEventListener("online", flush);
  setInterval(function () { if (load(QUEUE, []).length) flush(); }, 15000);

  // ------------------------------------------------------------- lists
  var list = doc.getElementById("items");
  var rows = list ? Array.prototype.slice.call(list.querySelectorAll(".row[data-id]")) : [];
  var cur = -1;
  var cursorKey = "tidings-cursor:" + location.pathname + location.search;
  var LIST = "tidings-list";  // the list an article was opened from (no Referer is sent)
  if (list) { try { sessionStorage.setItem(LIST, location.pathname + location.search); } catch (e) { /* ignore */ } }
  function savedList() {
    var back = null;
    try { back = sessionStorage.getItem(LIST); } catch (e) { /* ignore */ }
    return back && back.charAt(0) === "/" && back.charAt(1) !== "/" ? back : null;
  }
  function backToList() { go(savedList() || "/"); }
  function setCursor(i, scroll) {
    if (!rows.length) return;
    i = Math.max(0, Math.min(rows.length - 1, i));
    if (cur >= 0 && rows[cur]) rows[cur].classList.remove("cursor");
    cur = i;
    rows[cur].classList.add("cursor");
    try { sessionStorage.setItem(cursorKey, rows[cur].dataset.id); } catch (e) { /* ignore */ }
    if (scroll !== false) rows[cur].scrollIntoView({ block: "nearest" });
  }
  function rowIds(row) { return row.dataset.ids.split(",").map(Number); }
  function openRow(row) {
    if (!row) return;
    row.classList.remove("unread");
    location.href = row.querySelector("a.title").href;
  }
  function toggleRead(row) {
    var read = row.classList.contains("unread");
    row.classList.toggle("unread", !read);
    change(rowIds(row), { read: read }).then(function (ok) { if (!ok) row.classList.toggle("unread", read); });
  }
  function toggleStar(row) {
    var starred = !row.classList.contains("starred");
    row.classList.toggle("starred", starred);
    change([Number(row.dataset.id)], { starred: starred });
  }
  function markAbove() {
    if (cur < 0) return;
    var ids = [];
    for (var i = 0; i <= cur; i++) { ids = ids.concat(rowIds(rows[i])); rows[i].classList.remove("unread"); }
    change(ids, { read: true });
    toast("Marked " + ids.length + " as read");
  }
  if (rows.length) {
    var saved = null;
    try { saved = sessionStorage.getItem(cursorKey); } catch (e) { /* ignore */ }
    rows.forEach(function (r, i) {
      if (saved && r.dataset.id === saved) setCursor(i, true);
      r.querySelector("a.title").addEventListener("click", function () {
        setCursor(i, false); r.classList.remove("unread");
      });
    });
  }

  // ----------------------------------------------------------- article
  var article = doc.getElementById("article");
  function articleState(key, on) {
    var btn = doc.getElementById(key === "read" ? "btn-read" : "btn-star");
    article.dataset[key] = on ? "1" : "0";
    if (!btn) return;
    btn.textContent = on ? btn.dataset.on : btn.dataset.off;
    if (key === "starred") btn.setAttribute("aria-pressed", on ? "true" : "false");
    var hidden = btn.form.querySelector('input[name="' + key + '"]');
    if (hidden) hidden.value = on ? "0" : "1";
  }
  function articleToggle(key) {
    var on = article.dataset[key] !== "1";
    articleState(key, on);
    var ch = {}; ch[key] = on;
    change([Number(article.dataset.id)], ch).then(function (ok) { if (!ok) articleState(key, !on); });
  }
  if (article) {
    var id = Number(article.dataset.id);
    var recent = load(RECENT, []).filter(function (r) { return r.id !== id; });
    var h1 = article.querySelector("h1");
    recent.unshift({ id: id, title: h1 ? h1.textContent : "#" + id, at: Date.now() });
    save(RECENT, recent.slice(0, 20));
    if (isAdmin && article.dataset.read !== "1") {
      articleState("read", true);
      change([id], { read: true });
    }
    var delNext = doc.getElementById("delete-next");
    if (delNext) {
      delNext.value = savedList() || delNext.value;  // back to the list it came from
      delNext.form.addEventListener("submit", function (e) {
        if (!window.confirm("Delete this item for good? Its feed will not bring it back.")) e.preventDefault();
      });
    }
    ["btn-read", "btn-star"].forEach(function (bid) {
      var btn = doc.getElementById(bid);
      if (btn) btn.form.addEventListener("submit", function (e) {
        e.preventDefault(); articleToggle(bid === "btn-read" ? "read" : "starred");
      });
    });
  }

  // ------------------------------------------------------ offline page
  var offlineList = doc.getElementById("offline-list");
  if (offlineList) {
    load(RECENT, []).forEach(function (r) {
      var li = doc.createElement("li"), a = doc.createElement("a");
      a.href = "/item/" + Number(r.id); a.textContent = r.title;
      li.appendChild(a); offlineList.appendChild(li);
    });
  }

  // --------------------------------------------------------- keyboard
  var pendingG = 0;
  function go(path) { location.href = path; }
  doc.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) {
      if (e.key === "Escape") t.blur();
      return;
    }
    var k = e.key;
    if (help && !help.hidden) { if (k === "Escape" || k === "?") toggleHelp(false); e.preventDefault(); return; }
    if (k === "Escape" && body.classList.contains("drawer-open")) { drawer(false); e.preventDefault(); return; }
    if (Date.now() - pendingG < 1200) {
      pendingG = 0;
      var dest = { h: "/", u: "/unread", s: "/starred", a: "/all" }[k];
      if (dest) { e.preventDefault(); go(dest); }
      return;
    }
    var row = cur >= 0 ? rows[cur] : null;
    var url = article ? article.dataset.url : row ? row.dataset.url : "";
    var handled = true;
    switch (k) {
      case "g": pendingG = Date.now(); break;
      case "?": toggleHelp(); break;
      case "/": var q = doc.getElementById("q"); if (q) { q.focus(); q.select(); } break;
      case "t": cycleTheme(); break;
      case "j": if (rows.length) setCursor(cur + 1); else handled = false; break;
      case "k": if (rows.length) setCursor(cur < 0 ? 0 : cur - 1); else handled = false; break;
      case "o": case "Enter": if (row) openRow(row); else handled = false; break;
      case "v": if (url) window.open(url, "_blank", "noopener,noreferrer"); else handled = false; break;
      case "m": if (article) articleToggle("read"); else if (row) toggleRead(row); else handled = false; break;
      case "s": if (article) articleToggle("starred"); else if (row) toggleStar(row); else handled = false; break;
      case "A": markAbove(); break;
      case "J": handled = nextSource(1); break;
      case "K": handled = nextSource(-1); break;
      case "n": var older = doc.getElementById("older"); if (older) go(older.href); else handled = false; break;
      case "p": var newer = doc.getElementById("newest"); if (newer) go(newer.href); else handled = false; break;
      case "u": if (article) backToList(); else handled = false; break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  });

  // --------------------------------------------------- service worker
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () { /* optional */ });
  }
  flush();
})();
