"""An instructor's commands for a class: regrade, lti."""

from __future__ import annotations

import click

from cli.setting_options import data_dir_option, database_url_option, setting_option


@click.command("regrade")
@click.argument("exercise_id", metavar="EXERCISE")
@click.option("--class", "class_id", default=None, help="Only this class's learners (the id that ends its page's "
                                                         "address); default: every submission.")
@click.option("--all", "scope", flag_value="all", default=True, help="Every finished submission (default).")
@click.option("--latest", "scope", flag_value="latest", help="Only each learner's latest submission.")
@click.option("--reason", default="", help="Why (learners whose verdict changes read it).")
@database_url_option
@data_dir_option
@setting_option("exercises_dir", "--exercises")
@setting_option("sandbox")
def regrade_command(exercise_id, class_id, scope, reason, database_url, data_dir, exercises_dir, sandbox):
    """Grade EXERCISE's stored submissions again under its current version (those graded under it are skipped).
    On PostgreSQL `practice worker`s grade them; on SQLite this command does, in the --sandbox given."""
    from cli.course import regrade

    regrade(exercise_id, class_id, scope == "latest", reason, database_url, data_dir, exercises_dir, sandbox)


@click.group()
def lti():
    """LTI 1.3: register the LMS platforms and deployments that launch into classes (see docs/lti.md)."""


@lti.command("add-platform")
@click.option("--issuer", required=True, help="The platform's issuer (iss), e.g. https://canvas.instructure.com.")
@click.option("--client-id", required=True, help="The client id the platform gave this tool.")
@click.option("--auth-login-url", required=True, help="The platform's OIDC authorization URL.")
@click.option("--token-url", required=True, help="The platform's OAuth 2 token URL (for grade passback).")
@click.option("--jwks-url", required=True, help="The platform's public keyset URL.")
@database_url_option
@data_dir_option
def lti_add_platform(issuer, client_id, auth_login_url, token_url, jwks_url, database_url, data_dir):
    """Register an LMS that launches this tool."""
    from cli.course import add_platform

    add_platform(issuer, client_id, auth_login_url, token_url, jwks_url, database_url, data_dir)


@lti.command("add-deployment")
@click.option("--issuer", required=True, help="The registered platform's issuer.")
@click.option("--client-id", default=None, help="Its client id (needed when the issuer is registered twice).")
@click.option("--deployment-id", required=True, help="The deployment id the platform shows for this tool.")
@click.option("--class", "class_id", required=True, help="The class its launches join (the id ending its page).")
@database_url_option
@data_dir_option
def lti_add_deployment(issuer, client_id, deployment_id, class_id, database_url, data_dir):
    """Send a deployment's launches into a class (registering it again moves it to another class)."""
    from cli.course import add_deployment

    add_deployment(issuer, client_id, deployment_id, class_id, database_url, data_dir)


@lti.command("show")
@setting_option("base_url")
@database_url_option
@data_dir_option
def lti_show(base_url, database_url, data_dir):
    """The URLs and keys to enter in the LMS, and the platforms registered here."""
    from cli.course import show

    show(base_url, database_url, data_dir)
