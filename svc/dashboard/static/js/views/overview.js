// The overview: open reports by status, severity and category, new and resolved per day, and
// the median time to resolve. Charts are SVG drawn here (no chart library): bars for counts,
// paired columns for the days; every figure is also written as text, for screen readers.

import { api, query } from "../api.js";
import { appendTo, h, label, plural, select } from "../dom.js";
import { groupItem } from "./duplicates.js";

const SVG = "http://www.w3.org/2000/svg";
const PERIODS = [["7", "Last 7 days"], ["30", "Last 30 days"], ["90", "Last 90 days"], ["365", "Last year"]];

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

export async function overviewView(main, context) {
  const wanted = {
    project_id: context.query.get("project_id") || "",
    days: context.query.get("days") || "30",
  };
  const [projects, stats, growing] = await Promise.all([
    api.get("/projects"),
    api.get(`/stats${query(wanted)}`),
    api.get(`/reports/groups${query({ project_id: wanted.project_id, days: 7, limit: 5 })}`),
  ]);
  if (!context.isCurrent()) return;
  const choose = h("form", { class: "filters", "aria-label": "Overview of" },
    h("div", { class: "filter" }, h("label", { for: "overview-project" }, "Project"),
      select("project_id", [["", "All projects"], ...projects.map((p) => [p.id, p.name])], wanted.project_id, { id: "overview-project" })),
    h("div", { class: "filter" }, h("label", { for: "overview-days" }, "Period"),
      select("days", PERIODS, wanted.days, { id: "overview-days" })));
  choose.addEventListener("change", (event) => {
    context.navigate(`/overview${query({ ...wanted, [event.target.name]: event.target.value })}`);
  });
  const open = stats.open.byStatus.new + stats.open.byStatus.in_progress;
  const created = stats.perDay.reduce((sum, day) => sum + day.created, 0);
  const resolved = stats.perDay.reduce((sum, day) => sum + day.resolved, 0);
  appendTo(main,
    h("div", { class: "page-heading" }, h("h1", {}, "Overview")),
    choose,
    h("div", { class: "figures" },
      figure("Open", open, `${stats.open.byStatus.new} new, ${stats.open.byStatus.in_progress} in progress`),
      figure("Filed", created, "in the period"),
      figure("Resolved", resolved, "in the period"),
      figure("Median time to resolve", stats.medianHoursToResolve === null ? "–" : hoursText(stats.medianHoursToResolve),
        "of those resolved in the period")),
    h("div", { class: "charts" },
      chartPanel("Open by severity", barChart(stats.open.bySeverity, "severity")),
      chartPanel("Open by category", barChart(stats.open.byCategory, "category"))),
    chartPanel("Filed and resolved per day", dayChart(stats.perDay)),
    h("section", { class: "panel", "aria-label": "Bugs reported most this week" },
      h("h2", {}, "Bugs reported most this week"),
      growing.items.length
        ? h("ol", { class: "groups" }, growing.items.map(groupItem))
        : h("p", { class: "empty" }, "No bug was reported twice in the last 7 days.")));
}

function figure(title, value, note) {
  return h("section", { class: "panel figure", "aria-label": title },
    h("h2", {}, title), h("p", { class: "value" }, String(value)), h("p", { class: "note" }, note));
}

function hoursText(hours) {
  return hours < 48 ? `${hours} h` : plural(Math.round((hours / 24) * 10) / 10, "day");
}

function chartPanel(title, chart) {
  return h("section", { class: "panel chart", "aria-label": title }, h("h2", {}, title), chart);
}

// Horizontal bars, one per value, longest for the largest count.
function barChart(counts, kind) {
  const entries = Object.entries(counts);
  const most = Math.max(1, ...entries.map(([, count]) => count));
  const row = 28;
  const width = 320;
  const labelWidth = 100;
  const chart = svg("svg", { viewBox: `0 0 ${width + 40} ${entries.length * row}`, role: "img",
    "aria-label": entries.map(([name, count]) => `${label(name)}: ${count}`).join(", ") });
  entries.forEach(([name, count], index) => {
    const y = index * row;
    const length = (count / most) * (width - labelWidth);
    chart.append(
      svg("text", { x: 0, y: y + 18, class: "chart-label" }, label(name)),
      svg("rect", { x: labelWidth, y: y + 5, width: Math.max(length, count ? 2 : 0), height: row - 10,
        class: `bar ${kind}-${name}` }),
      svg("text", { x: labelWidth + length + 6, y: y + 18, class: "chart-value" }, String(count)));
  });
  return chart;
}

// Two columns per day: filed, then resolved; a label every few days.
function dayChart(days) {
  const height = 160;
  const step = 720 / days.length;
  const most = Math.max(1, ...days.map((day) => Math.max(day.created, day.resolved)));
  const width = days.length * step;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 24}`, role: "img", class: "days",
    "aria-label": `Filed and resolved per day, ${days[0].date} to ${days[days.length - 1].date}` });
  const every = Math.ceil(days.length / 8);
  days.forEach((day, index) => {
    const x = index * step;
    const column = (value, offset, kind) => {
      const tall = (value / most) * height;
      return svg("rect", { x: x + offset, y: height - tall, width: step / 2 - 1, height: tall, class: `bar ${kind}` },
        svg("title", {}, `${day.date}: ${value} ${kind}`));
    };
    chart.append(column(day.created, 0, "filed"), column(day.resolved, step / 2, "resolved"));
    if (index % every === 0) {
      chart.append(svg("text", { x, y: height + 16, class: "chart-label" }, day.date.slice(5)));
    }
  });
  const legend = h("p", { class: "legend" }, h("span", { class: "key filed" }), " filed ",
    h("span", { class: "key resolved" }), " resolved");
  const table = h("details", {}, h("summary", {}, "The figures"),
    h("table", { class: "metadata" }, h("tbody", {}, days.filter((day) => day.created || day.resolved).map((day) =>
      h("tr", {}, h("th", { scope: "row" }, day.date), h("td", {}, `${day.created} filed, ${day.resolved} resolved`))))));
  return h("div", {}, chart, legend, table);
}
