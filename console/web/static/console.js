// agentinfra console: live regions re-read their HTML when the server's
// event stream says they are stale; forms post without leaving the page.
// No framework, no build step.
"use strict";
(function () {
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  // System notifications: what starts waiting while the tab is in the
  // background is shown once (clicking it opens the item); the browser's
  // permission is asked once per browser.
  var seen = {};
  (($("#pending-count") || {dataset: {}}).dataset.keys || "").split(" ").forEach(function (k) { if (k) seen[k] = true; });
  if ("Notification" in window && Notification.permission === "default" && !localStorage.getItem("agentinfra-notify-asked")) {
    localStorage.setItem("agentinfra-notify-asked", "1");
    try { Notification.requestPermission(); } catch (_) {}
  }
  function notifyNew(items) {
    items.forEach(function (it) {
      if (seen[it.key]) return;
      seen[it.key] = true;
      if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
      var n = new Notification("agentinfra: " + it.what, { body: it.title, tag: it.key });
      n.onclick = function () { window.focus(); location.href = "/inbox#" + it.key; n.close(); };
    });
  }

  function flash(text, isError) {
    var f = $("#flash");
    if (!f) return;
    f.textContent = text;
    f.className = isError ? "error" : "ok";
    f.setAttribute("role", isError ? "alert" : "status");
    clearTimeout(flash.t);
    flash.t = setTimeout(function () { f.textContent = ""; f.className = ""; }, isError ? 12000 : 5000);
  }

  // morph puts html into region, keeping the elements whose data-key and
  // data-ver did not change (what a person is typing or has unfolded stays);
  // an element that changed is replaced, keeping what the person had typed,
  // chosen or focused in its forms.
  function morph(region, html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var old = {};
    $$(":scope > [data-key]", region).forEach(function (el) { old[el.dataset.key] = el; });
    var next = [], carried = [];
    Array.prototype.forEach.call(tpl.content.childNodes, function (n) {
      if (n.nodeType !== 1) return;
      var k = n.dataset.key;
      if (k !== undefined && old[k] && same(old[k], n)) {
        next.push(old[k]);
        return;
      }
      if (k !== undefined && old[k]) carried.push(carryInput(old[k], n));
      next.push(n);
    });
    place(region, next);
    carried.forEach(function (f) {
      if (!f) return;
      f.el.focus();
      try { f.el.setSelectionRange(f.start, f.end); } catch (_) {} // not a text field
    });
  }

  // same says whether a rendering of an element is the one on the page:
  // by its data-ver when it has one, else by its whole content (two
  // elements without a version were the same forever: the Sessions list
  // never changed live).
  function same(el, n) {
    if (n.dataset.ver !== undefined || el.dataset.ver !== undefined) return el.dataset.ver === n.dataset.ver;
    return el.isEqualNode(n);
  }

  // place makes next the children of region, touching no element that
  // stays where it is: a kept element taken out of the page, even for an
  // instant, loses the focus, and what the person types next goes nowhere.
  function place(region, next) {
    var keep = new Set(next);
    Array.prototype.slice.call(region.childNodes).forEach(function (c) {
      if (!keep.has(c)) region.removeChild(c);
    });
    var cur = region.firstChild;
    next.forEach(function (n) {
      if (n === cur) { cur = cur.nextSibling; return; }
      region.insertBefore(n, cur); // new, or kept but moved by the new order
    });
  }

  // controlKey names a form control across renderings: its form's action,
  // its name, and a radio's or checkbox's value.
  function controlKey(el) {
    var box = el.type === "radio" || el.type === "checkbox";
    var f = el.closest("form");
    return (f ? f.getAttribute("action") : "") + "|" + el.name + "|" + (box ? el.value : "");
  }

  // carryInput copies what a person changed in from's controls to the same
  // controls of to, and returns the control of to to focus with its caret
  // (or null).
  function carryInput(from, to) {
    var byKey = {};
    $$("input[name], select[name], textarea[name]", to).forEach(function (el) { byKey[controlKey(el)] = el; });
    var focus = null;
    $$("input[name], select[name], textarea[name]", from).forEach(function (el) {
      var t = byKey[controlKey(el)];
      if (!t) return;
      if (el === document.activeElement) {
        focus = { el: t, start: null, end: null };
        try { focus.start = el.selectionStart; focus.end = el.selectionEnd; } catch (_) {}
      }
      if (el.type === "radio" || el.type === "checkbox") {
        if (el.checked !== el.defaultChecked) t.checked = el.checked;
      } else if (el.tagName === "SELECT") {
        var changed = Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
        if (changed) t.value = el.value;
      } else if (el.value !== el.defaultValue) {
        t.value = el.value;
      }
    });
    return focus;
  }

  var busy = new Map();
  function refresh(region) {
    if (busy.get(region)) { busy.set(region, "again"); return; }
    busy.set(region, true);
    var url = region.dataset.src;
    if (region.dataset.keep) {
      var ids = $$(":scope > [data-key]", region).map(function (el) { return el.dataset.key; }).filter(function (k) { return /^[ps]?\d+$/.test(k); });
      if (ids.length) url += (url.indexOf("?") < 0 ? "?" : "&") + "keep=" + ids.join(",");
    }
    fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (r.status === 401) { setConn("off", "signed out: open a new link"); throw new Error("401"); }
      return r.text();
    }).then(function (html) { morph(region, html); })
      .catch(function () {})
      .finally(function () {
        var again = busy.get(region) === "again";
        busy.delete(region);
        if (again) refresh(region);
      });
  }
  function refreshTopic(topic) {
    $$('[data-live="' + topic + '"]').forEach(refresh);
  }

  function setConn(state, text) {
    var c = $("#conn");
    if (!c) return;
    c.dataset.state = state;
    c.textContent = text;
  }

  function connect() {
    var log = $("#log");
    var url = "/events" + (log ? "?session=" + encodeURIComponent(log.dataset.session) : "");
    var es = new EventSource(url);
    es.addEventListener("hello", function () {
      setConn("live", "live");
      if (log) log.replaceChildren(); // the stream sends the whole log again
      $$("[data-live]").forEach(refresh);
    });
    ["sessions", "fleet", "board", "review"].forEach(function (t) {
      es.addEventListener(t, function () { refreshTopic(t); });
    });
    es.addEventListener("inbox", function (e) {
      refreshTopic("inbox");
      var b = $("#pending-count");
      try {
        var d = JSON.parse(e.data), n = d.pending;
        if (b && n !== undefined) { b.textContent = n; b.setAttribute("aria-label", n + " pending"); b.hidden = !n; }
        notifyNew(d.items || []);
      } catch (_) {}
    });
    es.addEventListener("log", function (e) {
      if (!log) return;
      var near = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
      var tpl = document.createElement("template");
      tpl.innerHTML = e.data;
      log.appendChild(tpl.content);
      while (log.children.length > 1000) log.removeChild(log.firstElementChild);
      if (near) log.scrollTop = log.scrollHeight;
    });
    es.onerror = function () { setConn("off", "reconnecting…"); };
  }

  function post(form, extra) {
    var body = new URLSearchParams(new FormData(form));
    if (extra) Object.keys(extra).forEach(function (k) { body.set(k, extra[k]); });
    var buttons = $$("button", form);
    buttons.forEach(function (b) { b.disabled = true; });
    return fetch(form.action, { method: "POST", body: body, credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json().catch(function () { return { ok: false, error: "HTTP " + r.status }; }); })
      .then(function (res) {
        if (res.confirm && confirm(res.error + ":\n\n" + res.diverged.join("\n") + "\n\nRestore anyway?")) {
          return post(form, { force: "1" });
        }
        flash(res.ok ? res.message : res.error, !res.ok);
        if (res.ok) {
          form.reset();
          if (form.id) $$('[data-pending-of="' + form.id + '"]').forEach(function (el) { el.remove(); });
          $$("[data-live]").forEach(refresh);
        }
      })
      .catch(function (err) { flash("Not sent: " + err, true); })
      .finally(function () { buttons.forEach(function (b) { b.disabled = false; }); });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches("form[data-async]")) return;
    e.preventDefault();
    post(form);
  });

  document.addEventListener("click", function (e) {
    var d = e.target.closest(".dismiss");
    if (d) { d.closest("[data-key]").remove(); }
  });

  // The review page: a line number opens a comment on that line, under
  // it; its fields belong to the Request changes form (form=), which
  // sends every open comment with its file and line.
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button.lc");
    if (!b) return;
    var row = b.closest("tr");
    var next = row.nextElementSibling;
    if (next && next.classList.contains("line-comment")) { $("textarea", next).focus(); return; }
    var tr = document.createElement("tr");
    tr.className = "line-comment";
    tr.dataset.pendingOf = "changes-form";
    var td = document.createElement("td");
    td.colSpan = 3;
    var label = document.createElement("label");
    var id = "lc-" + b.dataset.file.replace(/[^A-Za-z0-9]/g, "-") + "-" + b.dataset.line;
    label.htmlFor = id;
    label.textContent = "Comment on " + b.dataset.file + ":" + b.dataset.line;
    var text = document.createElement("textarea");
    text.id = id; text.name = "text"; text.rows = 2; text.setAttribute("form", "changes-form");
    text.placeholder = "sent with Request changes";
    [["file", b.dataset.file], ["line", b.dataset.line]].forEach(function (kv) {
      var h = document.createElement("input");
      h.type = "hidden"; h.name = kv[0]; h.value = kv[1]; h.setAttribute("form", "changes-form");
      td.appendChild(h);
    });
    var drop = document.createElement("button");
    drop.type = "button"; drop.className = "linkish"; drop.textContent = "Discard";
    drop.addEventListener("click", function () { tr.remove(); });
    td.appendChild(label); td.appendChild(text); td.appendChild(drop);
    tr.appendChild(td);
    row.after(tr);
    text.focus();
  });

  // The board: drag a card onto a column (the "Move to" form does the same
  // from the keyboard).
  document.addEventListener("dragstart", function (e) {
    var card = e.target.closest && e.target.closest(".tcard");
    if (card) e.dataTransfer.setData("text/plain", card.dataset.id);
  });
  // The column under the card is outlined while it is dragged over it.
  function dropTarget(col) {
    $$(".col.drop-target").forEach(function (c) { if (c !== col) c.classList.remove("drop-target"); });
    if (col) col.classList.add("drop-target");
  }
  document.addEventListener("dragover", function (e) {
    var col = e.target.closest && e.target.closest(".col");
    if (col) e.preventDefault();
    dropTarget(col);
  });
  document.addEventListener("dragend", function () { dropTarget(null); });
  document.addEventListener("drop", function (e) {
    dropTarget(null);
    var col = e.target.closest && e.target.closest(".col");
    var id = e.dataTransfer.getData("text/plain");
    if (!col || !id) return;
    e.preventDefault();
    var form = $("#task-" + CSS.escape(id) + " form.move");
    if (!form) return;
    form.querySelector("select").value = col.dataset.status;
    post(form);
  });

  function newLink() {
    fetch("/link", { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (res) {
        if (!res.ok) { flash(res.error, true); return; }
        $("#link-qr").src = res.qr;
        $("#link-url").value = res.url;
        $("#link-dialog").showModal();
        $("#link-url").select();
      })
      .catch(function (err) { flash("No link: " + err, true); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var b = $("#new-link");
    if (b) b.addEventListener("click", newLink);
    connect();
  });
})();
