"""The queries ``bench/tool_search.py`` asks of ``search_catalog``, with their answers.

``QUERIES`` are 200: 150 in English that a tool serves, phrased as people ask an
assistant and as a model asks a search tool (keywords); 10 in French, German, Spanish,
Russian and Japanese (two each) that a tool serves; and 40 that no tool in the catalog
serves, many of them in the catalog's own words (a fax sent, a gym membership
cancelled, a certificate renewed). ``MULTILINGUAL`` are 50 more, ten in each of those
languages, all held out.

Each query names the tools that answer it (more than one where a person could fairly
mean either), or none. The split is fixed by position: even-numbered queries are the
tuning half, odd-numbered ones are held out and were never looked at while the engine
was tuned.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MULTILINGUAL", "QUERIES", "Query"]


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    answers: tuple[str, ...]
    """The tools that serve it (empty: none does)."""
    lang: str = "en"
    held_out: bool = False


_ROWS: list[tuple[str, str | None] | tuple[str, str | None, str]] = [
    # files
    ("show me what's in the src folder", "list_directory"),
    ("open config/settings.yaml and tell me what the timeout is", "read_file"),
    ("save this text as notes/todo.md", "write_file"),
    ("get rid of the old build.log file", "delete_file"),
    ("rename report_final.docx to report_v2.docx", "move_file"),
    ("make a new folder called archive/2024", "create_directory"),
    ("search files by glob pattern", "search_files"),
    ("how big is data/export.parquet and when was it last changed", "get_file_info"),
    ("put slides.pdf on google drive in the Marketing folder", "drive.upload"),
    ("give priya@acme.com edit access to the budget spreadsheet on drive", "drive.share"),
    ("fetch https://example.com/dataset.csv and save it locally", "download_url"),
    ("bundle the logs folder into a zip", "zip_files"),
    ("decompress backup.tar.gz into restore/", "unzip_archive"),
    # email
    ("email the Q3 numbers to dana@acme.com with subject Q3 results", "send_email"),
    ("reply to Mark's last message saying I'll be there", "reply_to_email"),
    ("forward the invoice email from Contoso to accounting@acme.com", "forward_email"),
    ("did I get any emails from the landlord last week?", "search_emails"),
    ("what's new in my inbox", "list_inbox"),
    (
        "write an email to the team about Friday's outage but don't send it yet, I want "
        "to review it",
        "create_email_draft",
    ),
    ("trash that spam message from the crypto guys", "delete_email"),
    ("mark all these newsletters as read", "mark_email_read"),
    ("move the receipt from Uber into my Expenses folder", "move_email"),
    ("automatically archive anything from noreply@linkedin.com", "create_mail_filter"),
    (
        "I'm on vacation from June 3 to June 14, set up an out of office message",
        "set_auto_reply",
    ),
    ("get email message by id", "get_email"),
    # calendar
    ("schedule a 30 minute sync with Leo and Ana tomorrow at 10", "calendar.create_event"),
    ("list calendar events for a date range", "calendar.list_events"),
    ("who accepted the design review invite?", "calendar.get_event"),
    ("push my 3pm dentist appointment to 4:30", "calendar.update_event"),
    ("cancel the team lunch event and let everyone know", "calendar.delete_event"),
    ("when are Sam, Kim and I all available for an hour next week", "calendar.find_free_time"),
    ("decline the budget meeting invitation", "calendar.respond_to_invitation"),
    ("which calendars do I have access to", "calendar.list_calendars"),
    ("reserve a room for 8 people Tuesday 2-3pm", "book_meeting_room"),
    ("remind me to call the bank at 5pm", "create_reminder"),
    # chat
    ("post in #general that the office is closed Monday", "slack_post_message"),
    ("DM Jonas on Slack that the build is green", "slack_send_direct_message"),
    ("slack channels list", "slack_list_channels"),
    ("start a new private channel for the acquisition project", "slack_create_channel"),
    ("add Maria and Tom to #launch", "slack_invite_users"),
    ("search slack for what Ahmed said about the API keys", "slack_search_messages"),
    ("thumbs up that message in #deploys", "slack_add_reaction"),
    ("set my slack status to 'in a meeting' for an hour", "slack_set_status"),
    ("catch me up on what happened in #incident-42", "slack_get_channel_history"),
    ("share the screenshot in #design", "slack_upload_file"),
    ("send a message to the user's phone number via SMS", "send_sms"),
    # issues
    ("file a bug: checkout button does nothing on Safari, project WEB", "createIssue"),
    ("what's the status of WEB-482?", "getIssue"),
    ("bump the priority of WEB-311 to high", "updateIssue"),
    ("search jira issues by JQL", "searchIssues"),
    ("leave a comment on API-77 saying the fix is deployed", "addIssueComment"),
    ("close WEB-120 as fixed", "transitionIssue"),
    ("give API-301 to Lena", "assignIssue"),
    ("mark WEB-500 as a duplicate of WEB-421", "linkIssues"),
    (
        "set up the next sprint on the Platform board, two weeks starting Monday",
        "createSprint",
    ),
    ("which projects exist in jira", "listProjects"),
    ("I spent 3 hours on DATA-12 today, log it", "logWork"),
    # code
    ("open a PR from feature/login into main in acme/web", "github_create_pull_request"),
    ("squash and merge PR #58 in acme/api", "github_merge_pull_request"),
    ("list open pull requests repository", "github_list_pull_requests"),
    ("show me the changes in PR 212", "github_get_pull_request_diff"),
    ("approve pull request 77 on acme/infra", "github_review_pull_request"),
    ("create a branch hotfix/payments off main", "github_create_branch"),
    ("read the README of acme/cli on the dev branch", "github_get_file_contents"),
    ("where in our repos do we call parseConfig?", "github_search_code"),
    ("make a new private repo called data-pipelines", "github_create_repository"),
    ("what got committed to main since yesterday", "github_list_commits"),
    ("kick off the nightly e2e workflow on the release branch", "ci_trigger_workflow"),
    ("why did CI run 99812 fail? get me the logs", "ci_get_run_logs"),
    # database
    ("how many users signed up last month? query the db", "run_sql_query"),
    ("list database tables", "list_tables"),
    ("what columns does the customers table have", "describe_table"),
    ("add these three rows to the products table", "db_insert_rows"),
    ("set status to archived for all orders older than 2020", "db_update_rows"),
    (
        "delete the test rows from the users table where email ends with @example.com",
        "db_delete_rows",
    ),
    ("create a table audit_log with id, actor, action and created_at", "create_table"),
    ("dump the results of this query to a csv file", "export_query_csv"),
    ("snapshot the production database before the migration", "backup_database"),
    ("restore yesterday's backup into the staging db", "restore_database"),
    ("why is this query so slow? show the query plan", "explain_query"),
    # billing
    ("bill Acme Corp $1,200 for the March consulting work", "create_invoice"),
    ("send invoice in_1JX9 to the customer", "send_invoice"),
    ("list overdue invoices", "list_invoices"),
    ("show me invoice in_88 with its line items", "get_invoice"),
    ("that invoice was sent by mistake, cancel it", "void_invoice"),
    ("charge customer cus_42 $49 for the setup fee", "charge_customer"),
    ("give the customer their money back for payment pi_777", "refund_payment"),
    ("payments received in a date range", "list_payments"),
    ("sign up cus_9 for the pro monthly plan with a 14 day trial", "create_subscription"),
    (
        "the client wants to stop their subscription at the end of the month",
        "cancel_subscription",
    ),
    ("how much money is in our stripe account", "get_balance"),
    # crm
    ("add Jane Doe from Globex to our contacts, jane@globex.com", "crm_create_contact"),
    ("crm contact lookup by email", "crm_find_contacts"),
    ("update Jane's phone number to 555-0199 in the crm", "crm_update_contact"),
    ("create an opportunity for Globex worth $50k", "crm_create_deal"),
    ("we won the Initech deal, mark it closed won", "crm_update_deal_stage"),
    ("show me my deals in negotiation", "crm_list_deals"),
    ("log that I had a call with Jane today about pricing", "crm_log_activity"),
    ("add Umbrella Corp as a new account, umbrella.com, pharma", "crm_create_company"),
    ("how is our sales pipeline looking this quarter?", "crm_pipeline_report"),
    ("there are two records for Bob Smith, combine them", "crm_merge_contacts"),
    ("hand the new lead from the webinar to Carlos", "crm_assign_lead"),
    # ops
    ("scale the api deployment in prod to 6 replicas", "k8s-scale-deployment"),
    ("bounce the checkout deployment in the payments namespace", "k8s-restart-deployment"),
    ("the worker pod keeps crashing, show me its logs", "k8s-get-pod-logs"),
    ("kubernetes list pods namespace", "k8s-list-pods"),
    ("spin up a new VM called build-runner-3, e2-standard-8", "cloud.create_instance"),
    ("turn on instance i-0abc again", "cloud.start_instance"),
    ("shut down the gpu box to save money", "cloud.stop_instance"),
    ("list our running VMs in europe-west1", "cloud.list_instances"),
    ("ship version 2.4.1 of billing-service to production", "deploy_service"),
    ("the last release broke checkout, roll it back in production", "rollback_deployment"),
    ("what's the p99 latency of the search service over the last hour", "get_service_metrics"),
    ("page me if error rate goes above 5%", "create_alert"),
    ("search application logs for errors", "search_logs"),
    # docs
    ("jot down a note: buy milk, call plumber", "notes_create"),
    ("find my notes about the Berlin trip", "notes_search"),
    ("add 'follow up with legal' to the end of my meeting notes", "notes_append"),
    ("write a wiki page in the ENG space documenting the deploy process", "wiki_create_page"),
    ("update the onboarding wiki page with the new VPN steps", "wiki_update_page"),
    ("search confluence pages", "wiki_search"),
    ("open the wiki page called 'Release checklist'", "wiki_get_page"),
    ("start a google doc for the Q4 planning memo", "docs_create_document"),
    ("save the contract doc as a PDF", "docs_export_pdf"),
    ("add 'renew passport' to my to-do list, due next Friday", "todo_add_task"),
    ("tick off the 'pay rent' task", "todo_complete_task"),
    ("what's on my todo list for this week", "todo_list_tasks"),
    # travel
    ("is it raining in Seattle right now?", "get_current_weather"),
    ("weather forecast next 5 days Lisbon", "get_weather_forecast"),
    ("is the air safe to go running in Delhi today", "get_air_quality"),
    ("what are the coordinates of 1600 Amphitheatre Parkway", "geocode"),
    ("what address is at 48.8584, 2.2945", "reverse_geocode"),
    ("how long does it take to bike from the office to the station", "get_directions"),
    ("any good ramen places open near me?", "search_places"),
    ("find flights from SFO to Tokyo on May 2, coming back May 12", "search_flights"),
    ("cheap hotels in Rome for 2 people, 10-13 April", "search_hotels"),
    ("book room 2 at hotel h_881 for April 10 to 13 under Maria Rossi", "book_hotel"),
    ("what time is 9am New York in Singapore", "convert_timezone"),
    ("how many euros is 250 dollars", "get_exchange_rate"),
    # people
    ("who is Fatima Khan and what team is she on", "hr.get_employee"),
    ("employee directory search by department", "hr.search_employees"),
    ("I need to take next Thursday and Friday off for vacation", "hr.request_time_off"),
    ("how many vacation days do I have left?", "hr.get_time_off_balance"),
    ("approve Tom's leave request", "hr.approve_time_off"),
    ("are we hiring any engineers?", "hr.list_job_openings"),
    ("get reimbursed for my 84 euro train ticket", "hr.submit_expense"),
    ("download my pay slip for March", "hr.get_payslip"),
    ("who does Alex report to", "hr.get_org_chart"),
    (
        "we have a new designer starting on the 1st, kick off onboarding",
        "hr.onboard_employee",
    ),
    (
        "set up an interview for candidate Wei Zhang with Sara and Omar on Monday 11am",
        "hr.schedule_interview",
    ),
    # in other languages, served
    ("envoie un e-mail à Paul pour lui dire que la réunion est annulée", "send_email", "fr"),
    ("quel temps fera-t-il à Lyon demain ?", "get_weather_forecast", "fr"),
    ("Erstelle ein Ticket im Projekt WEB: Der Login funktioniert nicht", "createIssue", "de"),
    ("Wie viele Urlaubstage habe ich noch?", "hr.get_time_off_balance", "de"),
    ("programa una reunión con Ana el lunes a las 10", "calendar.create_event", "es"),
    ("reembolsa el pago pi_123 al cliente", "refund_payment", "es"),
    ("покажи логи пода api-7f9 в namespace prod", "k8s-get-pod-logs", "ru"),
    ("удали файл old_report.pdf", "delete_file", "ru"),
    ("明日の東京の天気を教えて", "get_weather_forecast", "ja"),
    ("Slackの#generalチャンネルにメッセージを投稿して", "slack_post_message", "ja"),
    # served by no tool
    ("order a large pepperoni pizza for delivery", None),
    ("translate this paragraph into German", None),
    ("what's Apple's stock price right now", None),
    ("play some relaxing jazz", None),
    ("generate an image of a cat wearing a hat", None),
    ("turn off the living room lights", None),
    ("book me a table for two at an Italian restaurant tonight", None),
    ("call an Uber to the airport", None),
    ("what's the score of the Lakers game", None),
    ("summarize this YouTube video", None),
    ("transcribe this voice memo", None),
    ("post this photo to Instagram", None),
    ("schedule a tweet for tomorrow morning", None),
    ("check my credit score", None),
    ("renew my car insurance", None),
    ("what does the word ephemeral mean", None),
    ("solve the integral of x squared times sin x", None),
    ("recommend a good sci-fi novel", None),
    ("buy 10 shares of Tesla", None),
    ("reset my wifi router", None),
    ("order more printer toner", None),
    ("track my Amazon package", None),
    ("create a Spotify playlist for running", None),
    ("what's the population of Canada", None),
    ("convert this mp4 video to a gif", None),
    ("remove the background from this photo", None),
    ("find me a recipe for banana bread", None),
    ("send a fax to the county clerk", None),
    ("start a Zoom call with the design team now", None),
    ("order new business cards", None),
    ("what's my horoscope today", None),
    ("pay my electricity bill", None),
    ("rotate the AWS access keys for the CI user", None),
    ("renew the TLS certificate for api.acme.com", None),
    ("pretty-print this JSON", None),
    ("cancel my gym membership", None),
    ("how many calories are in an avocado", None),
    ("order lunch for the team from the Thai place", None),
    ("print the quarterly report on the office printer", None),
    ("lock the front door", None),
]

_MULTILINGUAL: list[tuple[str, str, str]] = [
    ("crée un nouveau dossier appelé factures", "create_directory", "fr"),
    ("montre-moi les factures impayées", "list_invoices", "fr"),
    ("ajoute Marie Dupont aux contacts du CRM", "crm_create_contact", "fr"),
    (
        "redémarre le déploiement checkout dans le namespace payments",
        "k8s-restart-deployment",
        "fr",
    ),
    ("cherche dans le wiki la procédure d'astreinte", "wiki_search", "fr"),
    ("réserve une salle de réunion pour jeudi à 14h", "book_meeting_room", "fr"),
    ("quels sont les vols de Paris à Montréal le 3 mai ?", "search_flights", "fr"),
    ("convertis 100 euros en dollars", "get_exchange_rate", "fr"),
    ("ferme le ticket WEB-88", "transitionIssue", "fr"),
    ("envoie un SMS au +33612345678 pour dire que j'arrive", "send_sms", "fr"),
    ("Lösche die Datei temp/cache.db", "delete_file", "de"),
    ("Zeig mir meine Termine für morgen", "calendar.list_events", "de"),
    ("Schick Anna eine Direktnachricht auf Slack", "slack_send_direct_message", "de"),
    ("Erstelle eine Rechnung für den Kunden cus_77 über 300 Euro", "create_invoice", "de"),
    ("Wie ist das Wetter gerade in Hamburg?", "get_current_weather", "de"),
    ("Stelle die Datenbank aus dem Backup von gestern wieder her", "restore_database", "de"),
    ("Füge eine Aufgabe zu meiner To-do-Liste hinzu: Steuererklärung", "todo_add_task", "de"),
    ("Beantrage Urlaub vom 1. bis 5. August", "hr.request_time_off", "de"),
    ("Welche Pull Requests sind im Repo acme/web offen?", "github_list_pull_requests", "de"),
    ("Suche in meinen E-Mails nach der Bestellbestätigung", "search_emails", "de"),
    ("lee el archivo config.json", "read_file", "es"),
    ("busca hoteles en Madrid del 5 al 8 de junio", "search_hotels", "es"),
    ("cancela la suscripción sub_55 al final del periodo", "cancel_subscription", "es"),
    ("escala el deployment api a 4 réplicas en prod", "k8s-scale-deployment", "es"),
    ("responde al correo de Luis diciendo que sí", "reply_to_email", "es"),
    ("crea un canal de Slack para el proyecto nuevo", "slack_create_channel", "es"),
    ("muéstrame el esquema de la tabla pedidos", "describe_table", "es"),
    ("¿quién es el jefe de Carmen?", "hr.get_org_chart", "es"),
    ("añade una nota: comprar pan", "notes_create", "es"),
    ("cómo llego al aeropuerto en transporte público", "get_directions", "es"),
    ("отправь письмо Ивану с отчётом", "send_email", "ru"),
    ("создай задачу в проекте MOBILE: обновить иконки", "createIssue", "ru"),
    ("какая погода будет в Москве на выходных", "get_weather_forecast", "ru"),
    ("найди контакт Ольги в CRM", "crm_find_contacts", "ru"),
    ("сделай резервную копию базы данных prod", "backup_database", "ru"),
    ("останови виртуальную машину vm-12", "cloud.stop_instance", "ru"),
    ("запусти workflow deploy.yml на ветке main", "ci_trigger_workflow", "ru"),
    ("переименуй файл draft.txt в final.txt", "move_file", "ru"),
    ("покажи мой расчётный лист за март", "hr.get_payslip", "ru"),
    ("верни деньги клиенту за платёж pi_9", "refund_payment", "ru"),
    ("新しいフォルダを作成して", "create_directory", "ja"),
    ("請求書を顧客に送信して", "send_invoice", "ja"),
    ("来週の木曜日の10時に田中さんとの会議を入れて", "calendar.create_event", "ja"),
    ("このファイルを削除して", "delete_file", "ja"),
    ("先週の山田さんからのメールを探して", "search_emails", "ja"),
    ("本番環境にバージョン2.3をデプロイして", "deploy_service", "ja"),
    ("有給休暇の残り日数を教えて", "hr.get_time_off_balance", "ja"),
    ("大阪の現在の天気は？", "get_current_weather", "ja"),
    ("プルリクエスト42をマージして", "github_merge_pull_request", "ja"),
    ("顧客リストをCSVでエクスポートして", "export_query_csv", "ja"),
]


def _query(index: int, row: tuple[str, str | None] | tuple[str, str | None, str]) -> Query:
    text, answer = row[0], row[1]
    lang = row[2] if len(row) == 3 else "en"
    answers = tuple(answer.split("|")) if answer else ()
    return Query(text, answers, lang, held_out=index % 2 == 1)


QUERIES: tuple[Query, ...] = tuple(_query(index, row) for index, row in enumerate(_ROWS))
MULTILINGUAL: tuple[Query, ...] = tuple(
    Query(text, (answer,), lang, held_out=True) for text, answer, lang in _MULTILINGUAL
)
