"""The tool catalog ``bench/tool_search.py`` searches: 150 tools in 13 domains.

Written for this benchmark, in the shapes tools take in catalogs that gather many
servers: snake_case, camelCase, kebab-case and dotted names, terse and long descriptions,
parameters with and without descriptions, and near-duplicates across domains (a message
sent by email, chat or SMS; issues, tasks and notes created; logs of pods, builds and
services; searches of mail, chat, wikis, code and files).

A parameter is written ``name="type: description"``: a leading ``*`` marks it required,
the type is ``string``, ``integer``, ``number``, ``boolean``, ``object``, ``string[]``,
``object[]`` or ``a|b|c`` (a string with those values).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DOMAINS", "TOOLS"]

_TYPES = {"string", "integer", "number", "boolean", "object"}


def _schema(params: dict[str, str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, written in params.items():
        spec = written.removeprefix("*")
        if spec != written:
            required.append(name)
        kind, _, text = spec.partition(": ")
        prop: dict[str, Any]
        if kind in _TYPES:
            prop = {"type": kind}
        elif kind.endswith("[]"):
            prop = {"type": "array", "items": {"type": kind[:-2]}}
        else:
            prop = {"type": "string", "enum": kind.split("|")}
        if text:
            prop["description"] = text
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def tool(
    name: str, description: str, /, *, shown_as: str | None = None, **params: str
) -> dict[str, Any]:
    """A tool definition as ``tools/list`` shows it; ``shown_as`` is its title."""
    defined: dict[str, Any] = {"name": name}
    if shown_as is not None:
        defined["title"] = shown_as
    defined["description"] = description
    defined["inputSchema"] = _schema(params)
    return defined


FILES = [
    tool(
        "list_directory",
        "List the files and subfolders in a directory of the workspace, with their sizes.",
        path="*string: Directory to list, relative to the workspace root",
        recursive="boolean: Also list the contents of subfolders",
    ),
    tool(
        "read_file",
        "Read the complete contents of a text file from the workspace. Use this to view "
        "source code, configuration or notes. Fails on binary files.",
        path="*string: Path of the file",
        encoding="string: Text encoding, utf-8 by default",
    ),
    tool(
        "write_file",
        "Create a new file or completely overwrite an existing file with new content.",
        path="*string: Where to write",
        content="*string: The full text to write",
        overwrite="boolean: Replace the file if it exists",
    ),
    tool(
        "delete_file",
        "Permanently delete a file from the workspace. This cannot be undone.",
        path="*string: Path of the file to delete",
    ),
    tool(
        "move_file",
        "Move or rename a file or folder.",
        source="*string: Current path",
        destination="*string: New path",
    ),
    tool(
        "create_directory",
        "Create a new folder (and any missing parent folders).",
        path="*string: Folder to create",
    ),
    tool(
        "search_files",
        "Find files in the workspace whose name matches a glob pattern or whose text "
        "contains a search string.",
        pattern="*string: Glob such as *.py, or text to look for",
        path="string: Folder to search in",
        content="boolean: Match file contents instead of names",
    ),
    tool(
        "get_file_info",
        "Get metadata about a file: size, created and modified times, permissions.",
        path="*string",
    ),
    tool(
        "drive.upload",
        "Upload a local file to cloud drive storage.",
        shown_as="Upload to Drive",
        local_path="*string: The file on disk",
        folder_id="string: Drive folder to put it in",
        name="string: Name to give it in the drive",
    ),
    tool(
        "drive.share",
        "Share a drive file or folder with someone by email address, as viewer, "
        "commenter or editor.",
        shown_as="Share a Drive file",
        file_id="*string",
        email="*string: Who gets access",
        role="viewer|commenter|editor: Access level",
    ),
    tool(
        "download_url",
        "Download a file from a web address into the workspace.",
        url="*string: http or https address",
        destination="string: Where to save it",
    ),
    tool(
        "zip_files",
        "Compress files or folders into a zip archive.",
        paths="*string[]: Files and folders to include",
        archive="*string: Path of the zip file to create",
    ),
    tool(
        "unzip_archive",
        "Extract a zip or tar.gz archive into a folder.",
        archive="*string: The archive",
        destination="string: Folder to extract into",
    ),
]

EMAIL = [
    tool(
        "send_email",
        "Send an email message. Supports CC, BCC and file attachments.",
        to="*string[]: Recipient email addresses",
        subject="*string: Subject line",
        body="*string: Plain text or HTML body",
        cc="string[]: Carbon copy recipients",
        bcc="string[]",
        attachments="string[]: Paths of files to attach",
    ),
    tool(
        "reply_to_email",
        "Reply to an email thread. Set reply_all to answer every participant.",
        message_id="*string: The email being answered",
        body="*string",
        reply_all="boolean",
    ),
    tool(
        "forward_email",
        "Forward an email you received to other people, with an optional note.",
        message_id="*string",
        to="*string[]",
        note="string: Text added above the forwarded message",
    ),
    tool(
        "search_emails",
        "Search the mailbox. Filters by sender, date range, unread status and free text "
        "in subject or body. Returns message ids, senders, subjects and snippets.",
        query="string: Words to look for",
        sender="string: From address or name",
        after="string: ISO date",
        before="string: ISO date",
        unread_only="boolean",
    ),
    tool(
        "get_email",
        "Get the full content of one email message by id, including headers and attachments.",
        message_id="*string",
    ),
    tool(
        "list_inbox",
        "List the most recent messages in a mail folder (Inbox by default).",
        folder="string: Inbox, Sent, Archive, Spam or a label",
        limit="integer: How many messages, newest first",
    ),
    tool(
        "create_email_draft",
        "Save an email as a draft without sending it, so it can be reviewed first.",
        to="string[]",
        subject="string",
        body="string",
    ),
    tool(
        "delete_email",
        "Move an email to the trash, or delete it permanently.",
        message_id="*string",
        permanent="boolean: Skip the trash",
    ),
    tool(
        "mark_email_read",
        "Mark email messages as read or unread.",
        message_ids="*string[]",
        read="boolean: False marks them unread",
    ),
    tool(
        "move_email",
        "Move an email message to another folder or apply a label to it.",
        message_id="*string",
        folder="*string: Target folder or label",
    ),
    tool(
        "create_mail_filter",
        "Create a mailbox rule that automatically handles incoming mail matching "
        "conditions (sender, subject words): label, archive, forward or delete it.",
        from_address="string",
        subject_contains="string",
        action="*label|archive|forward|delete|mark_read",
        target="string: Label name or forwarding address",
    ),
    tool(
        "set_auto_reply",
        "Turn the out-of-office automatic reply on or off, with its message and dates.",
        enabled="*boolean",
        message="string: The reply senders receive",
        start="string: ISO date",
        end="string: ISO date",
    ),
]

CALENDAR = [
    tool(
        "calendar.create_event",
        "Create an event on a calendar and send invitations to attendees.",
        title="*string: Event title",
        start="*string: Start time, ISO 8601",
        end="*string: End time, ISO 8601",
        attendees="string[]: Email addresses to invite",
        location="string: Place or video link",
        description="string",
    ),
    tool(
        "calendar.list_events",
        "List calendar events between two dates.",
        start="*string",
        end="*string",
        calendar_id="string: Which calendar, primary by default",
    ),
    tool(
        "calendar.get_event",
        "Get the details of a calendar event: time, attendees and their responses, "
        "location, conferencing link.",
        event_id="*string",
    ),
    tool(
        "calendar.update_event",
        "Change an existing event: move it to another time, rename it, change its "
        "location or add and remove attendees.",
        event_id="*string",
        start="string",
        end="string",
        title="string",
        location="string",
        add_attendees="string[]",
        remove_attendees="string[]",
    ),
    tool(
        "calendar.delete_event",
        "Delete a calendar event and optionally notify the attendees that it is cancelled.",
        event_id="*string",
        notify_attendees="boolean",
    ),
    tool(
        "calendar.find_free_time",
        "Find time slots when all the given people are free, for scheduling a meeting "
        "of a given length.",
        attendees="*string[]",
        duration_minutes="*integer",
        earliest="string: Search from this date",
        latest="string: Search until this date",
    ),
    tool(
        "calendar.respond_to_invitation",
        "Accept, decline or tentatively accept a meeting invitation.",
        event_id="*string",
        response="*accepted|declined|tentative",
        comment="string",
    ),
    tool(
        "calendar.list_calendars",
        "List the calendars the user can see, their own and shared ones.",
    ),
    tool(
        "book_meeting_room",
        "Reserve a conference room for a time range. Lists free rooms when no room is given.",
        start="*string",
        end="*string",
        room="string: Room name",
        capacity="integer: Minimum number of seats",
    ),
    tool(
        "create_reminder",
        "Set a reminder that notifies the user at a given time.",
        text="*string: What to be reminded of",
        remind_at="*string: When, ISO 8601",
        repeat="none|daily|weekly|monthly",
    ),
]

CHAT = [
    tool(
        "slack_post_message",
        "Post a message to a Slack channel, optionally as a reply in a thread.",
        channel="*string: Channel name or id",
        text="*string: Message text (mrkdwn)",
        thread_ts="string: Timestamp of the parent message to reply in its thread",
    ),
    tool(
        "slack_send_direct_message",
        "Send a private direct message to a Slack user.",
        user="*string: User id, @handle or email",
        text="*string",
    ),
    tool(
        "slack_list_channels",
        "List the Slack channels in the workspace.",
        include_archived="boolean",
        limit="integer",
    ),
    tool(
        "slack_create_channel",
        "Create a new Slack channel.",
        name="*string: Lowercase, no spaces",
        is_private="boolean",
        topic="string",
    ),
    tool(
        "slack_invite_users",
        "Invite one or more users to a Slack channel.",
        channel="*string",
        users="*string[]",
    ),
    tool(
        "slack_search_messages",
        "Search Slack messages across channels and DMs. Supports Slack search "
        "modifiers such as from:@user and in:#channel.",
        query="*string",
        count="integer",
    ),
    tool(
        "slack_add_reaction",
        "Add an emoji reaction to a Slack message.",
        channel="*string",
        timestamp="*string: The message's ts",
        emoji="*string: Emoji name without colons",
    ),
    tool(
        "slack_set_status",
        "Set the user's Slack status text and emoji, with an optional expiry.",
        text="*string",
        emoji="string",
        expires_in_minutes="integer",
    ),
    tool(
        "slack_get_channel_history",
        "Fetch the recent messages of a Slack channel, newest first.",
        channel="*string",
        limit="integer",
        oldest="string: Only messages after this timestamp",
    ),
    tool(
        "slack_upload_file",
        "Upload a file to a Slack channel with an optional comment.",
        channel="*string",
        path="*string: Local file",
        comment="string",
    ),
    tool(
        "send_sms",
        "Send a text message (SMS) to a phone number.",
        phone_number="*string: E.164 number, like +14155550123",
        message="*string: At most 1600 characters",
    ),
]

ISSUES = [
    tool(
        "createIssue",
        "Create a new issue in a project tracker (bug, story or task) with a summary, "
        "description, priority, labels and assignee.",
        shown_as="Create issue",
        project="*string: Project key, like WEB",
        summary="*string: One-line title",
        description="string",
        issueType="bug|story|task|epic",
        priority="lowest|low|medium|high|highest",
        labels="string[]",
        assignee="string",
    ),
    tool(
        "getIssue",
        "Get an issue by its key: status, assignee, description, comments and history.",
        issueKey="*string: Like WEB-123",
    ),
    tool(
        "updateIssue",
        "Edit the fields of an existing issue: summary, description, priority, labels, due date.",
        issueKey="*string",
        fields="*object: Field names and their new values",
    ),
    tool(
        "searchIssues",
        "Search issues with a JQL query or plain words, for example all open bugs "
        "assigned to someone in a project.",
        query="*string: JQL or text",
        maxResults="integer",
    ),
    tool(
        "addIssueComment",
        "Add a comment to an issue.",
        issueKey="*string",
        body="*string",
    ),
    tool(
        "transitionIssue",
        "Move an issue through its workflow: to do, in progress, in review, done. "
        "Use it to close or reopen issues.",
        issueKey="*string",
        status="*string: The target status",
        resolution="string: Fixed, Won't fix, Duplicate...",
    ),
    tool(
        "assignIssue",
        "Assign an issue to a user, or unassign it.",
        issueKey="*string",
        assignee="string: Account id or email; empty unassigns",
    ),
    tool(
        "linkIssues",
        "Link two issues: blocks, is blocked by, duplicates, relates to.",
        inwardIssue="*string",
        outwardIssue="*string",
        linkType="*blocks|duplicates|relates",
    ),
    tool(
        "createSprint",
        "Create a sprint on a scrum board with start and end dates.",
        board="*string",
        name="*string",
        startDate="string",
        endDate="string",
        goal="string",
    ),
    tool(
        "listProjects",
        "List the projects in the issue tracker with their keys and leads.",
    ),
    tool(
        "logWork",
        "Log time spent working on an issue (a worklog entry).",
        issueKey="*string",
        timeSpent="*string: Like 2h 30m",
        comment="string",
        started="string",
    ),
]

CODE = [
    tool(
        "github_create_pull_request",
        "Open a pull request on GitHub from a head branch into a base branch.",
        repo="*string: owner/name",
        head="*string: Branch with the changes",
        base="*string: Branch to merge into",
        title="*string",
        body="string",
        draft="boolean",
    ),
    tool(
        "github_merge_pull_request",
        "Merge a pull request, by merge commit, squash or rebase.",
        repo="*string",
        number="*integer",
        method="merge|squash|rebase",
    ),
    tool(
        "github_list_pull_requests",
        "List the pull requests of a repository, open by default.",
        repo="*string",
        state="open|closed|all",
        author="string",
    ),
    tool(
        "github_get_pull_request_diff",
        "Get the diff of a pull request: the changed files and lines.",
        repo="*string",
        number="*integer",
    ),
    tool(
        "github_review_pull_request",
        "Submit a review on a pull request: approve it, request changes, or comment.",
        repo="*string",
        number="*integer",
        event="*APPROVE|REQUEST_CHANGES|COMMENT",
        body="string",
    ),
    tool(
        "github_create_branch",
        "Create a new branch in a repository from another branch or commit.",
        repo="*string",
        branch="*string",
        from_ref="string: Defaults to the default branch",
    ),
    tool(
        "github_get_file_contents",
        "Read a file from a GitHub repository at a branch, tag or commit.",
        repo="*string",
        path="*string",
        ref="string",
    ),
    tool(
        "github_search_code",
        "Search source code across GitHub repositories.",
        query="*string: Code search syntax",
        repo="string: Limit to one repository",
    ),
    tool(
        "github_create_repository",
        "Create a new GitHub repository for the user or an organization.",
        name="*string",
        private="boolean",
        description="string",
        org="string",
    ),
    tool(
        "github_list_commits",
        "List the commits of a branch, newest first, optionally since a date or for a path.",
        repo="*string",
        branch="string",
        since="string",
        path="string",
    ),
    tool(
        "ci_trigger_workflow",
        "Start a CI workflow run (GitHub Actions workflow_dispatch) on a branch, with inputs.",
        repo="*string",
        workflow="*string: Workflow file name or id",
        ref="*string",
        inputs="object",
    ),
    tool(
        "ci_get_run_logs",
        "Get the logs of a CI workflow run, to see why a build or test job failed.",
        repo="*string",
        run_id="*integer",
        job="string",
    ),
]

DATABASE = [
    tool(
        "run_sql_query",
        "Execute a SQL statement against the database and return the rows. Read-only "
        "unless allow_writes is set.",
        sql="*string",
        database="string",
        allow_writes="boolean",
    ),
    tool(
        "list_tables",
        "List the tables (and views) in a database schema.",
        database="string",
        schema="string",
    ),
    tool(
        "describe_table",
        "Show a table's columns with their types, nullability, defaults, indexes and foreign keys.",
        table="*string",
    ),
    tool(
        "db_insert_rows",
        "Insert one or more rows into a table.",
        table="*string",
        rows="*object[]: Each row as column: value",
    ),
    tool(
        "db_update_rows",
        "Update the rows of a table that match a condition.",
        table="*string",
        values="*object: Columns to set",
        where="*string: SQL condition",
    ),
    tool(
        "db_delete_rows",
        "Delete the rows of a table that match a condition.",
        table="*string",
        where="*string",
    ),
    tool(
        "create_table",
        "Create a new database table from column definitions.",
        name="*string",
        columns="*object[]: name, type, nullable, primary_key",
    ),
    tool(
        "export_query_csv",
        "Run a query and save its result as a CSV file.",
        sql="*string",
        path="*string: Output file",
    ),
    tool(
        "backup_database",
        "Take a backup (snapshot) of a database.",
        database="*string",
        label="string",
    ),
    tool(
        "restore_database",
        "Restore a database from a backup snapshot.",
        backup_id="*string",
        target_database="string",
    ),
    tool(
        "explain_query",
        "Show the execution plan of a SQL query, to find out why it is slow.",
        sql="*string",
        analyze="boolean: Run it and report actual timings",
    ),
]

BILLING = [
    tool(
        "create_invoice",
        "Create a draft invoice for a customer with line items.",
        customer_id="*string",
        items="*object[]: description, quantity, unit_amount",
        currency="string: Three-letter code",
        due_date="string",
    ),
    tool(
        "send_invoice",
        "Finalize an invoice and email it to the customer for payment.",
        invoice_id="*string",
    ),
    tool(
        "list_invoices",
        "List invoices, filtered by customer and status (draft, open, paid, void, overdue).",
        customer_id="string",
        status="draft|open|paid|void|overdue",
    ),
    tool(
        "get_invoice",
        "Retrieve one invoice with its line items, totals and payment status.",
        invoice_id="*string",
    ),
    tool(
        "void_invoice",
        "Void an invoice that was sent by mistake so it can no longer be paid.",
        invoice_id="*string",
    ),
    tool(
        "charge_customer",
        "Charge a customer's saved card or payment method a one-off amount.",
        customer_id="*string",
        amount="*integer: In the smallest currency unit, like cents",
        currency="*string",
        description="string",
    ),
    tool(
        "refund_payment",
        "Refund a payment, fully or partially.",
        payment_id="*string",
        amount="integer: Omit for a full refund",
        reason="duplicate|fraudulent|requested_by_customer",
    ),
    tool(
        "list_payments",
        "List payments received, by customer and date range.",
        customer_id="string",
        created_after="string",
        created_before="string",
    ),
    tool(
        "create_subscription",
        "Subscribe a customer to a recurring price plan, with an optional free trial.",
        customer_id="*string",
        price_id="*string",
        trial_days="integer",
    ),
    tool(
        "cancel_subscription",
        "Cancel a customer's subscription now or at the end of the billing period.",
        subscription_id="*string",
        at_period_end="boolean",
    ),
    tool(
        "get_balance",
        "Get the account's available and pending balance by currency.",
    ),
]

CRM = [
    tool(
        "crm_create_contact",
        "Add a new contact (a person) to the CRM.",
        name="*string",
        email="string",
        phone="string",
        company="string",
        title="string: Job title",
    ),
    tool(
        "crm_find_contacts",
        "Look up CRM contacts by name, email, phone or company.",
        query="*string",
    ),
    tool(
        "crm_update_contact",
        "Update a contact's details in the CRM.",
        contact_id="*string",
        properties="*object",
    ),
    tool(
        "crm_create_deal",
        "Create a sales deal (opportunity) with an amount and pipeline stage.",
        name="*string",
        amount="number",
        stage="string",
        contact_id="string",
        close_date="string",
    ),
    tool(
        "crm_update_deal_stage",
        "Move a deal to another pipeline stage, such as negotiation, closed won or closed lost.",
        deal_id="*string",
        stage="*string",
    ),
    tool(
        "crm_list_deals",
        "List deals in the sales pipeline by stage and owner.",
        stage="string",
        owner="string",
    ),
    tool(
        "crm_log_activity",
        "Record a call, meeting or email with a contact on their CRM timeline.",
        contact_id="*string",
        type="*call|meeting|email",
        notes="string",
        occurred_at="string",
    ),
    tool(
        "crm_create_company",
        "Add a company (an account) to the CRM.",
        name="*string",
        domain="string: Website domain",
        industry="string",
    ),
    tool(
        "crm_pipeline_report",
        "Report on the sales pipeline: deal count and value by stage, win rate, "
        "forecast for a period.",
        period="string: This quarter by default",
        owner="string",
    ),
    tool(
        "crm_merge_contacts",
        "Merge two duplicate contact records into one.",
        primary_id="*string",
        duplicate_id="*string",
    ),
    tool(
        "crm_assign_lead",
        "Assign a lead to a sales representative.",
        lead_id="*string",
        owner="*string",
    ),
]

OPS = [
    tool(
        "k8s-scale-deployment",
        "Scale a Kubernetes deployment to a number of replicas.",
        namespace="*string",
        deployment="*string",
        replicas="*integer",
    ),
    tool(
        "k8s-restart-deployment",
        "Restart the pods of a Kubernetes deployment (a rolling restart).",
        namespace="*string",
        deployment="*string",
    ),
    tool(
        "k8s-get-pod-logs",
        "Get the logs of a pod's container in Kubernetes.",
        namespace="*string",
        pod="*string",
        container="string",
        since="string: Like 10m or 2h",
        previous="boolean: Logs of the previous, crashed container",
    ),
    tool(
        "k8s-list-pods",
        "List the pods in a namespace with their status and restarts.",
        namespace="*string",
        selector="string: Label selector",
    ),
    tool(
        "cloud.create_instance",
        "Launch a new virtual machine instance.",
        name="*string",
        machine_type="*string: Like e2-standard-4",
        image="string",
        region="string",
    ),
    tool(
        "cloud.start_instance",
        "Start a stopped virtual machine.",
        instance_id="*string",
    ),
    tool(
        "cloud.stop_instance",
        "Stop (shut down) a running virtual machine. Its disk is kept.",
        instance_id="*string",
    ),
    tool(
        "cloud.list_instances",
        "List virtual machines by region and state.",
        region="string",
        state="running|stopped|all",
    ),
    tool(
        "deploy_service",
        "Deploy a version of a service to an environment (staging or production).",
        service="*string",
        version="*string: Image tag or git sha",
        environment="*staging|production",
    ),
    tool(
        "rollback_deployment",
        "Roll a service back to its previous (or a given) version in an environment.",
        service="*string",
        environment="*staging|production",
        to_version="string",
    ),
    tool(
        "get_service_metrics",
        "Get a service's metrics over a time window: CPU, memory, request rate, "
        "latency percentiles, error rate.",
        service="*string",
        metric="*cpu|memory|requests|latency|errors",
        window="string: Like 1h",
    ),
    tool(
        "create_alert",
        "Create a monitoring alert that fires when a metric crosses a threshold, and "
        "where to notify.",
        metric="*string",
        threshold="*number",
        notify="string: Channel or pager",
    ),
    tool(
        "search_logs",
        "Search application logs across services with a query and time range.",
        query="*string",
        service="string",
        since="string",
        level="debug|info|warning|error",
    ),
]

DOCS = [
    tool(
        "notes_create",
        "Create a note.",
        title="string",
        body="*string",
        folder="string",
        tags="string[]",
    ),
    tool(
        "notes_search",
        "Search your notes by words in their title, body or tags.",
        query="*string",
    ),
    tool(
        "notes_append",
        "Append text to the end of an existing note.",
        note_id="*string",
        text="*string",
    ),
    tool(
        "wiki_create_page",
        "Create a page in the team wiki (Confluence) under a space and optional parent page.",
        space="*string",
        title="*string",
        content="*string: Markdown",
        parent_id="string",
    ),
    tool(
        "wiki_update_page",
        "Replace the content of an existing wiki page, or change its title.",
        page_id="*string",
        content="string",
        title="string",
    ),
    tool(
        "wiki_search",
        "Search the team wiki for pages about a subject.",
        query="*string",
        space="string",
    ),
    tool(
        "wiki_get_page",
        "Read a wiki page's content by id or title.",
        page_id="string",
        title="string",
    ),
    tool(
        "docs_create_document",
        "Create a new Google Docs document, optionally with initial text.",
        title="*string",
        content="string",
    ),
    tool(
        "docs_export_pdf",
        "Export a document as a PDF file.",
        document_id="*string",
    ),
    tool(
        "todo_add_task",
        "Add a task to a to-do list, with an optional due date and priority.",
        title="*string",
        due="string",
        list="string: Which list, Inbox by default",
        priority="integer: 1 (highest) to 4",
    ),
    tool(
        "todo_complete_task",
        "Mark a to-do task as done.",
        task_id="*string",
    ),
    tool(
        "todo_list_tasks",
        "List the tasks in a to-do list, optionally including completed ones.",
        list="string",
        include_completed="boolean",
        due_before="string",
    ),
]

TRAVEL = [
    tool(
        "get_current_weather",
        "Current weather conditions for a location: temperature, wind, humidity, precipitation.",
        location="*string: City name or coordinates",
        units="metric|imperial",
    ),
    tool(
        "get_weather_forecast",
        "Daily weather forecast for up to 10 days.",
        location="*string",
        days="integer",
    ),
    tool(
        "get_air_quality",
        "Air quality index and pollutant levels (PM2.5, ozone) for a location.",
        location="*string",
    ),
    tool(
        "geocode",
        "Convert an address into latitude and longitude coordinates.",
        address="*string",
    ),
    tool(
        "reverse_geocode",
        "Find the address of a latitude/longitude point.",
        latitude="*number",
        longitude="*number",
    ),
    tool(
        "get_directions",
        "Route and travel time between two places by car, transit, bike or on foot.",
        origin="*string",
        destination="*string",
        mode="driving|transit|bicycling|walking",
    ),
    tool(
        "search_places",
        "Find places nearby: restaurants, cafes, shops, pharmacies, with ratings and opening"
        " hours.",
        query="*string: What to look for",
        near="string: Location",
        open_now="boolean",
    ),
    tool(
        "search_flights",
        "Search flights between two airports on given dates, with prices.",
        origin="*string: Airport or city",
        destination="*string",
        departure_date="*string",
        return_date="string",
        passengers="integer",
        cabin="economy|premium|business|first",
    ),
    tool(
        "search_hotels",
        "Search hotels in a city for check-in and check-out dates, with prices and ratings.",
        city="*string",
        check_in="*string",
        check_out="*string",
        guests="integer",
        max_price="number",
    ),
    tool(
        "book_hotel",
        "Book a hotel room found with search_hotels.",
        hotel_id="*string",
        room_id="*string",
        check_in="*string",
        check_out="*string",
        guest_name="*string",
    ),
    tool(
        "convert_timezone",
        "Convert a time from one time zone to another.",
        time="*string",
        from_zone="*string: IANA name like Europe/Paris",
        to_zone="*string",
    ),
    tool(
        "get_exchange_rate",
        "Exchange rate between two currencies, and an amount converted.",
        base="*string: Currency code",
        quote="*string",
        amount="number",
    ),
]

PEOPLE = [
    tool(
        "hr.get_employee",
        "Get an employee's profile: job title, department, manager, location, start "
        "date, contact details.",
        employee="*string: Name, email or id",
    ),
    tool(
        "hr.search_employees",
        "Search the company directory by name, department, role or office.",
        query="string",
        department="string",
        office="string",
    ),
    tool(
        "hr.request_time_off",
        "Request vacation, sick leave or personal time off for a date range.",
        start_date="*string",
        end_date="*string",
        kind="*vacation|sick|personal|parental",
        note="string",
    ),
    tool(
        "hr.get_time_off_balance",
        "How many vacation and sick days an employee has left this year.",
        employee="string: Yourself by default",
    ),
    tool(
        "hr.approve_time_off",
        "Approve or deny a time-off request from someone who reports to you.",
        request_id="*string",
        approved="*boolean",
        comment="string",
    ),
    tool(
        "hr.list_job_openings",
        "List the open positions the company is hiring for.",
        department="string",
        location="string",
    ),
    tool(
        "hr.submit_expense",
        "Submit an expense report for reimbursement, with the receipt.",
        amount="*number",
        currency="*string",
        category="*travel|meals|equipment|software|other",
        description="string",
        receipt="string: Path of the receipt image or PDF",
    ),
    tool(
        "hr.get_payslip",
        "Get a payslip (salary statement) for a month.",
        month="*string: YYYY-MM",
    ),
    tool(
        "hr.get_org_chart",
        "Show who someone reports to and who reports to them.",
        employee="*string",
    ),
    tool(
        "hr.onboard_employee",
        "Start onboarding a new hire: accounts, equipment and first-week checklist.",
        name="*string",
        start_date="*string",
        role="*string",
        manager="string",
    ),
    tool(
        "hr.schedule_interview",
        "Schedule a job interview between a candidate and interviewers.",
        candidate="*string",
        interviewers="*string[]",
        start="*string",
        duration_minutes="integer",
    ),
]

DOMAINS: dict[str, list[dict[str, Any]]] = {
    "files": FILES,
    "email": EMAIL,
    "calendar": CALENDAR,
    "chat": CHAT,
    "issues": ISSUES,
    "code": CODE,
    "database": DATABASE,
    "billing": BILLING,
    "crm": CRM,
    "ops": OPS,
    "docs": DOCS,
    "travel": TRAVEL,
    "people": PEOPLE,
}
"""The catalog by domain."""

TOOLS: list[dict[str, Any]] = [defined for tools in DOMAINS.values() for defined in tools]
"""Every tool, as ``tools/list`` shows it."""
