// The caller's projects, and a form to create one.

import { api } from "../api.js";
import { appendTo, field, form, h } from "../dom.js";

export async function projectListView(main, context) {
  const projects = await api.get("/projects");
  if (!context.isCurrent()) return;
  const create = form({ class: "panel", "aria-label": "Create a project" }, [
    h("h2", {}, "Create a project"),
    field("Name", h("input", { name: "name", required: true, maxlength: 100 })),
    field("Tracking prefix (optional)",
      h("input", { name: "tracking_prefix", maxlength: 10, autocapitalize: "characters" }),
      "2 to 10 capital letters or digits, e.g. WEB. Left empty, it is derived from the name."),
    h("button", { type: "submit" }, "Create project"),
  ], async (values) => {
    const body = { name: values.name };
    if (values.tracking_prefix.trim()) body.tracking_prefix = values.tracking_prefix.trim();
    const project = await api.post("/projects", body);
    context.navigate(`/projects/${project.id}`);
  });
  appendTo(main, 
    h("div", { class: "page-heading" }, h("h1", {}, "Projects")),
    projects.length
      ? h("ul", { class: "cards" }, projects.map((project) => h("li", { class: "panel" },
        h("h2", {}, h("a", { href: `/projects/${project.id}` }, project.name)),
        h("p", {}, `Tracking ids ${project.trackingPrefix}-1, ${project.trackingPrefix}-2, … · you are ${project.role === "owner" ? "an owner" : `a ${project.role}`}`),
        h("p", {}, h("a", { href: `/reports?project_id=${project.id}` }, `Reports of ${project.name}`)))))
      : h("p", { class: "empty" },
        "No projects yet: create one below, then add the widget to your app with its API key."),
    create);
}
