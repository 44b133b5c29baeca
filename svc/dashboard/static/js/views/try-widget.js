// A dashboard page that embeds the project's own widget, as a web app would, so that an owner
// can file a test report in one click and watch it arrive. Leaving the page takes the widget
// off again (Svc.destroy puts back everything it hooked).

import { api } from "../api.js";
import { appendTo, h } from "../dom.js";

export async function tryWidgetView(main, context) {
  const project = await api.get(`/projects/${encodeURIComponent(context.params[0])}`);
  if (!context.isCurrent()) return;
  const origins = project.settings.allowedOrigins;
  const refused = origins.length && !origins.includes(location.origin);
  appendTo(main, 
    h("p", { class: "breadcrumb" }, h("a", { href: "/projects" }, "Projects"), " / ",
      h("a", { href: `/projects/${project.id}` }, project.name)),
    h("div", { class: "page-heading" }, h("h1", {}, "Try the widget")),
    h("section", { class: "panel" },
      h("p", {}, `The widget for ${project.name} is on this page, as it will be on your site: `,
        `its "${project.settings.widget.buttonText}" button sits in the corner. `,
        "What you file here is a real report of the project."),
      refused ? h("p", { role: "alert" }, `This project accepts reports only from ${origins.join(", ")}, `,
        `so the widget will say this site (${location.origin}) is not allowed.`) : null,
      h("p", {}, h("button", { type: "button", onclick: () => window.Svc?.open({
        title: "Test report from the dashboard",
        description: "Filed with the widget on the dashboard's try-widget page.",
        severity: "low",
      }) }, "Open the reporter with a test report")),
      h("p", {}, h("a", { href: `/reports?project_id=${project.id}` }, `${project.name}'s reports`))));
  const options = { projectKey: project.apiKey, endpoint: location.origin, release: "dashboard" };
  if (window.Svc) {
    window.Svc.init(options); // loaded on an earlier visit: start it again
  } else {
    document.body.append(h("script", {
      src: "/widget.js", async: true, "data-project-key": options.projectKey,
      "data-endpoint": options.endpoint, "data-release": options.release,
    }));
  }
  context.onLeave(() => window.Svc?.destroy());
}
