// hilbot's dashboard: sortable tables, and (served live) the page refreshed when the logs change.
// No inline handlers and no eval: the page's Content-Security-Policy allows this file only.
"use strict";

function cellValue(row, column) {
  const cell = row.children[column];
  if (!cell) return "";
  const raw = cell.getAttribute("data-value");
  return raw === null ? cell.textContent.trim() : Number(raw);
}

function sortTable(button) {
  const th = button.closest("th");
  const table = th.closest("table");
  const column = Number(button.dataset.column);
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("th[aria-sort]").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = cellValue(a, column);
    const y = cellValue(b, column);
    const order = typeof x === "number" && typeof y === "number"
      ? x - y : String(x).localeCompare(String(y));
    return ascending ? order : -order;
  });
  rows.forEach((row) => body.appendChild(row));
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button.sort");
  if (button) sortTable(button);
});

async function refresh() {
  const response = await fetch(window.location.href, { headers: { "X-Hilbot-Refresh": "1" } });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const main = document.getElementById("main");
  const next = fresh.getElementById("main");
  if (!main || !next) return;
  const open = new Set(Array.from(main.querySelectorAll("details[open]"), (d) => d.closest("section")?.id));
  next.querySelectorAll("details").forEach((d) => {
    if (open.has(d.closest("section")?.id)) d.open = true;
  });
  main.replaceChildren(...Array.from(next.childNodes));
  document.body.dataset.version = fresh.body.dataset.version;
  const status = document.querySelector(".status");
  if (status) status.textContent = "Updated " + new Date().toLocaleTimeString();
}

function busy() {
  // A keyboard or screen-reader user inside the content keeps their place: the swap waits.
  const main = document.getElementById("main");
  const focused = document.activeElement;
  return main !== null && focused !== null && focused !== main && main.contains(focused);
}

async function poll() {
  try {
    const response = document.hidden ? null : await fetch("/api/version", { cache: "no-store" });
    if (response && response.ok) {
      const version = (await response.json()).version;
      const status = document.querySelector(".status");
      if (version !== document.body.dataset.version && busy()) {
        if (status) status.textContent = "New data: the page updates when the focus leaves it";
      } else if (version !== document.body.dataset.version) {
        await refresh();
      }
    }
  } catch (error) {
    const status = document.querySelector(".status");
    if (status) status.textContent = "Not updating: the dashboard is not reachable";
  }
  window.setTimeout(poll, 1000);
}

if (document.body.dataset.live === "1") window.setTimeout(poll, 1000);
