// Sign in and sign up. Both start a session (the API sets the cookies) and go where the user
// was heading.

import { api } from "../api.js";
import { field, form, h } from "../dom.js";

function destination(context) {
  const next = context.query.get("next") || "";
  // Only a path of this site, as the browser itself reads it: "/\\evil.example" and
  // "/\t/evil.example" are other sites to a browser, though they start with one slash.
  let target = null;
  try {
    target = new URL(next, window.location.origin);
  } catch {
    return "/reports";
  }
  return next.startsWith("/") && target.origin === window.location.origin
    ? target.pathname + target.search + target.hash
    : "/reports";
}

function input(name, type, autocomplete, extra = {}) {
  return h("input", { name, type, autocomplete, required: true, ...extra });
}

export function signInView(main, context) {
  const signIn = form({ "aria-label": "Sign in" }, [
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "current-password")),
    h("button", { type: "submit" }, "Sign in"),
  ], async (values) => {
    context.signedIn(await api.post("/auth/login", values));
    context.navigate(destination(context), { replace: true });
  });
  main.append(h("section", { class: "panel narrow" },
    h("h1", {}, "Sign in to svc"),
    signIn,
    h("p", {}, "No account yet? ", h("a", { href: "/signup" }, "Sign up"))));
}

export function signUpView(main, context) {
  const signUp = form({ "aria-label": "Sign up" }, [
    field("Name", input("name", "text", "name", { maxlength: 100 })),
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "new-password", { minlength: 8, maxlength: 128 }),
      "At least 8 characters."),
    h("button", { type: "submit" }, "Create account"),
  ], async (values) => {
    context.signedIn(await api.post("/auth/register", values));
    context.navigate("/projects", { replace: true });
  });
  main.append(h("section", { class: "panel narrow" },
    h("h1", {}, "Create your svc account"),
    signUp,
    h("p", {}, "Already have an account? ", h("a", { href: "/login" }, "Sign in"))));
}
