// The report list: filters, search, sort and page all live in the page's URL, so a view can be
// shared, bookmarked or reloaded.

import { api, query } from "../api.js";
import { badge, formatTime, h, label, select } from "../dom.js";
import { CATEGORIES, SEVERITIES, SORTS, STATUSES } from "../constants.js";
import { snippetBlock } from "./snippet.js";

const FILTERS = ["project_id", "status", "severity", "category", "search", "sort"];
const PAGE_SIZE = 20;

function choices(values, anyText) {
  return [["", anyText], ...values.map((value) => [value, label(value)])];
}

export async function reportListView(main, context) {
  const wanted = Object.fromEntries(FILTERS.map((name) => [name, context.query.get(name) || ""]));
  const page = Math.max(1, Number.parseInt(context.query.get("page") || "1", 10) || 1);
  const [projects, listing] = await Promise.all([
    api.get("/projects"),
    api.get(`/reports${query({ ...wanted, page, page_size: PAGE_SIZE })}`),
  ]);
  if (!context.isCurrent()) return;
  const projectNames = new Map(projects.map((project) => [project.id, project.name]));

  const goTo = (changes) => {
    const next = { ...wanted, page: 1, ...changes };
    if (next.page === 1) delete next.page;
    context.navigate(`/reports${query(next)}`);
  };

  const filters = h("form", { class: "filters", role: "search", "aria-label": "Filter reports" },
    filterSelect("Project", "project_id",
      [["", "All projects"], ...projects.map((project) => [project.id, project.name])], wanted),
    filterSelect("Status", "status", choices(STATUSES, "Any status"), wanted),
    filterSelect("Severity", "severity", choices(SEVERITIES, "Any severity"), wanted),
    filterSelect("Category", "category", choices(CATEGORIES, "Any category"), wanted),
    filterSelect("Sort", "sort", SORTS, wanted),
    h("div", { class: "search" },
      h("label", { for: "filter-search" }, "Search"),
      h("input", { id: "filter-search", name: "search", type: "search", value: wanted.search,
                   placeholder: "Words in title or description" }),
      h("button", { type: "submit" }, "Search")));
  filters.addEventListener("change", (event) => {
    if (event.target.tagName === "SELECT") goTo({ [event.target.name]: event.target.value });
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    goTo({ search: filters.elements.search.value.trim() });
  });

  const filtered = FILTERS.some((name) => name !== "sort" && wanted[name]);
  main.append(
    h("div", { class: "page-heading" }, h("h1", {}, "Reports"),
      h("p", { class: "count", role: "status" }, `${listing.total} report${listing.total === 1 ? "" : "s"}`)),
    filters,
    listing.items.length
      ? reportTable(listing.items, projectNames)
      : emptyState(projects, filtered, listing.total),
    pager(listing, page, wanted),
  );
}

function filterSelect(text, name, options, wanted) {
  const id = `filter-${name}`;
  return h("div", { class: "filter" },
    h("label", { for: id }, text),
    select(name, options, wanted[name] || (name === "sort" ? "-created_at" : ""), { id }));
}

function reportTable(reports, projectNames) {
  return h("div", { class: "table-wrap" }, h("table", { class: "reports" },
    h("thead", {}, h("tr", {},
      ["Id", "Title", "Status", "Severity", "Category", "Project", "Reported"].map(
        (text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, reports.map((report) => {
      const href = `/reports/${encodeURIComponent(report.trackingId)}`;
      return h("tr", {},
        h("td", { "data-label": "Id" }, h("a", { href }, report.trackingId)),
        h("td", { "data-label": "Title", class: "title" }, h("a", { href }, report.title)),
        h("td", { "data-label": "Status" }, badge("status", report.status)),
        h("td", { "data-label": "Severity" }, badge("severity", report.severity)),
        h("td", { "data-label": "Category" }, label(report.category)),
        h("td", { "data-label": "Project" }, projectNames.get(report.projectId) || ""),
        h("td", { "data-label": "Reported" },
          h("time", { datetime: report.createdAt }, formatTime(report.createdAt))));
    }))));
}

function emptyState(projects, filtered, total) {
  if (total > 0) return h("p", { class: "empty" }, "This page is past the last one. ",
    h("a", { href: "/reports" }, "Back to the first page"));
  if (filtered) return h("div", { class: "empty" },
    h("p", {}, "No reports match these filters."),
    h("p", {}, h("a", { href: "/reports" }, "Clear the filters")));
  if (!projects.length) return h("div", { class: "empty" },
    h("p", {}, "No projects yet: reports are filed into a project."),
    h("p", {}, h("a", { href: "/projects" }, "Create your first project")));
  const project = projects[0];
  return h("div", { class: "empty" },
    h("p", {}, `No reports yet: add the widget to your app with this snippet for "${project.name}".`),
    snippetBlock(project),
    h("p", {}, h("a", { href: `/projects/${project.id}` }, "Project settings")));
}

function pager(listing, page, wanted) {
  const pages = Math.max(1, Math.ceil(listing.total / listing.pageSize));
  if (pages === 1 && page === 1) return null;
  const link = (to, text) => h("a", { href: `/reports${query({ ...wanted, page: to })}`, rel: text === "Next" ? "next" : "prev" }, text);
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? link(Math.min(page - 1, pages), "Previous") : null,
    h("span", {}, `Page ${page} of ${pages}`),
    page < pages ? link(page + 1, "Next") : null);
}
