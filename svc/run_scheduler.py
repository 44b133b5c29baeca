"""`python -OO -m svc.run_scheduler`: the scheduler process as the Procfile starts it, the same
as `flask --app svc scheduler` without Flask's command line, whose scan of every installed
package's entry points for commands stays in the process's memory (3 MB of an install's 300,
docs/performance.md, "Memory"). `-OO`: nothing this process runs reads a docstring (the
OpenAPI description's summaries and the MCP tools' descriptions are the web workers'), and
they are 4 MB of it."""

from svc import scheduler
from svc.app import create_app

if __name__ == "__main__":
    app = create_app()
    with app.app_context():
        scheduler.main(app)
