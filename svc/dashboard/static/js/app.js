// The dashboard's entry point: which view a URL shows, who is signed in, and navigation
// without reloading the page (every view still has a real URL that can be shared or reloaded).

import { api, mayBeSignedIn, whenSignedOut } from "./api.js";
import { h, replaceContent } from "./dom.js";
import {
  forgotPasswordView, invitationView, resetPasswordView, signInView, signUpView, unsubscribeView,
} from "./views/auth.js";
import { reportListView } from "./views/reports.js";
import { reportView } from "./views/report.js";
import { projectListView } from "./views/projects.js";
import { projectView } from "./views/project.js";
import { accountView } from "./views/account.js";
import { adminView } from "./views/admin.js";
import { overviewView } from "./views/overview.js";
import { tryWidgetView } from "./views/try-widget.js";

const ROUTES = [
  { pattern: /^\/login$/, view: signInView, public: true, title: "Sign in" },
  { pattern: /^\/signup$/, view: signUpView, public: true, title: "Sign up" },
  { pattern: /^\/forgot-password$/, view: forgotPasswordView, public: true, title: "Forgot password" },
  { pattern: /^\/reset-password\/([^/]+)$/, view: resetPasswordView, public: true, title: "New password" },
  // Signed in or not: the invitation's page offers what fits either.
  { pattern: /^\/invite\/([^/]+)$/, view: invitationView, anyone: true, title: "Invitation" },
  { pattern: /^\/unsubscribe\/([^/]+)$/, view: unsubscribeView, anyone: true, title: "Unsubscribe" },
  { pattern: /^\/reports$/, view: reportListView, nav: "reports", title: "Reports" },
  { pattern: /^\/overview$/, view: overviewView, nav: "overview", title: "Overview" },
  { pattern: /^\/reports\/([^/]+)$/, view: reportView, nav: "reports", title: "Report" },
  { pattern: /^\/projects$/, view: projectListView, nav: "projects", title: "Projects" },
  { pattern: /^\/projects\/([^/]+)$/, view: projectView, nav: "projects", title: "Project" },
  { pattern: /^\/projects\/([^/]+)\/try-widget$/, view: tryWidgetView, nav: "projects", title: "Try the widget" },
  { pattern: /^\/account$/, view: accountView, nav: "account", title: "Account" },
  { pattern: /^\/admin$/, view: adminView, nav: "admin", title: "Administration" },
];

const main = document.getElementById("main");
// `known`: whether the service has been asked who is signed in since the page loaded.
const session = { user: null, known: false };

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}

async function currentUser() {
  if (session.known) return session.user;
  if (!mayBeSignedIn()) return Object.assign(session, { user: null, known: true }).user;
  try {
    session.user = await api.get("/auth/me");
  } catch (error) {
    if (error.status !== 401) throw error;
    session.user = null;
  }
  session.known = true;
  return session.user;
}

function signInUrl() {
  const here = location.pathname + location.search;
  return ["/", "/login", "/reports"].includes(here)
    ? "/login" : `/login?next=${encodeURIComponent(here)}`;
}

let renderCount = 0;
let shown = ""; // the address (path and query) of the page on screen
// What the view on screen asked to have done when another takes its place.
const leaving = [];

async function render() {
  const rendering = ++renderCount;
  for (const cleanUp of leaving.splice(0)) cleanUp();
  const path = location.pathname;
  shown = path + location.search;
  if (path === "/") return navigate("/reports", { replace: true });
  const route = ROUTES.find((candidate) => candidate.pattern.test(path));
  if (!route) return showProblem({ status: 404, message: "There is no page at this address." });
  let user = null;
  try {
    user = await currentUser();
  } catch (error) {
    return showProblem(error);
  }
  if (!route.public && !route.anyone && !user) return navigate(signInUrl(), { replace: true });
  if (route.public && user) return navigate("/reports", { replace: true });
  showChrome(user, route);
  const params = path.match(route.pattern).slice(1).map(decodeURIComponent);
  const context = {
    user,
    params,
    query: new URLSearchParams(location.search),
    navigate,
    signedIn: (signedInUser) => Object.assign(session, { user: signedInUser, known: true }),
    isCurrent: () => rendering === renderCount,
    onLeave: (cleanUp) => leaving.push(cleanUp),
  };
  document.title = `${route.title} · svc`;
  main.replaceChildren();
  try {
    await route.view(main, context);
  } catch (error) {
    if (!error.status) throw error;
    if (rendering === renderCount) showProblem(error);
  }
  if (rendering === renderCount) main.focus({ preventScroll: true });
}

function showChrome(user, route) {
  const topbar = document.getElementById("topbar");
  topbar.hidden = !user;
  document.getElementById("who").textContent = user ? user.name : "";
  topbar.querySelector("[data-nav=admin]").hidden = !user?.isAdmin;
  for (const link of topbar.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === route.nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

// A view that could not be shown: what was wrong, in the words that fit it. A 422 here comes
// from the address itself (a filter the list does not know), as no form was sent.
function showProblem(problem) {
  document.title = "svc";
  const [heading, text] = problem.status === 404
    ? ["Page not found", problem.message]
    : problem.status === 422 && problem.errors
      ? ["This address asks for something svc does not know", Object.entries(problem.errors)
        .map(([name, messages]) => `${name}: ${[].concat(messages).join(" ")}`).join("; ")]
      : ["Something went wrong", problem.message];
  replaceContent(main, h("section", { class: "panel" },
    h("h1", {}, heading),
    h("p", { role: "alert" }, text),
    h("p", {}, h("a", { href: "/reports" }, "Back to the reports"))));
}

async function signOut() {
  try {
    await api.post("/auth/logout");
  } finally {
    session.user = null;
    navigate("/login");
  }
}

// Links inside the page navigate without a reload; modified clicks keep their usual meaning.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || link.target || link.hasAttribute("download")) return;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(link.href);
  // The API and single sign-on (a trip to the provider) are pages of their own.
  if (url.origin !== location.origin || /^\/(api|sso)\//.test(url.pathname)) return;
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

// A move to an anchor of the same page (a section's link, or back from one) is the view's to
// show (its hashchange), not a new page.
window.addEventListener("popstate", () => {
  if (location.pathname + location.search !== shown) render();
});
document.getElementById("sign-out").addEventListener("click", signOut);
whenSignedOut(() => {
  if (!session.user) return;
  session.user = null;
  navigate(signInUrl(), { replace: true });
});
render();
