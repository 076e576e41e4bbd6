/**
 * A third set of conventions for lesson recall (team-lessons.ts), written before the ranking of
 * issue 25 was changed and not tuned to: 44 conventions in four channels, as four teams would
 * write them. Within a channel the lessons share the team's everyday words (deploy, staging,
 * release, ticket, customer, keys, review, access), the questions paraphrase them (jargon, other
 * words for the same thing, a word or two in common at most), and the unrelated questions each
 * share one ordinary word with some lesson ("I lost my house keys") without being about it.
 */
import type { LessonSet } from "./team-lessons.ts";

export const CHANNEL_LESSON_SET: LessonSet = {
  name: "channels",
  cases: [
    // #eng: building, reviewing and shipping code.
    { channel: "C-eng", lesson: "Deploys to staging go through the deploy bot with `/deploy staging <branch>`, not by hand.", question: "how do I get my branch onto staging?" },
    { channel: "C-eng", lesson: "Production deploys need a green canary for 30 minutes before the full rollout.", question: "can I roll the new build out to all prod hosts right away?" },
    { channel: "C-eng", lesson: "Release branches are cut every second Monday; anything merged after the cut waits for the next release.", question: "my PR merged on Tuesday, will it be in this week's release?" },
    { channel: "C-eng", lesson: "Code review needs one approval from a code owner of every touched directory.", question: "who has to approve my PR that touches the billing and search folders?" },
    { channel: "C-eng", lesson: "Flaky tests are quarantined with the @flaky tag and a ticket, never deleted.", question: "this integration test fails randomly, can I just remove it?" },
    { channel: "C-eng", lesson: "The monorepo uses pnpm; running npm install breaks the lockfile.", question: "npm install gives me a weird lockfile diff, what am I doing wrong?" },
    { channel: "C-eng", lesson: "Database schema changes ship in two releases: add the column first, remove the old one later.", question: "I want to rename a column in the orders table, can I do it in one PR?" },
    { channel: "C-eng", lesson: "Staging data is reset every Sunday night from an anonymised prod snapshot.", question: "why did my test accounts on staging disappear over the weekend?" },
    { channel: "C-eng", lesson: "CI caches are keyed on the lockfile hash; bump the cache version in ci.yml to clear them.", question: "the pipeline keeps using stale node_modules, how do I bust it?" },
    { channel: "C-eng", lesson: "Mobile releases go to TestFlight beta testers for three days before the App Store.", question: "when can the iOS build be submitted for review by Apple?" },
    { channel: "C-eng", lesson: "Breaking API changes need a deprecation notice in the changelog one release ahead.", question: "I'm removing the v1 orders endpoint, anything I need to do first?" },

    // #support: customers and their tickets.
    { channel: "C-support", lesson: "Tickets from enterprise customers are answered within 2 hours, others within one business day.", question: "how fast do we have to get back to Acme Corp, they're on the enterprise plan?" },
    { channel: "C-support", lesson: "Refund requests go to the billing queue in Zendesk; support never issues refunds directly.", question: "a customer wants their money back for last month, can I do that from the admin panel?" },
    { channel: "C-support", lesson: "Bug reports from customers get a Jira ticket linked in the Zendesk ticket before escalation.", question: "a user found a crash in the export, how do I pass it to engineering?" },
    { channel: "C-support", lesson: "Never share a customer's data with another customer, even inside the same company, without the account owner's OK.", question: "someone from Globex wants to see the invoices of their colleague's workspace" },
    { channel: "C-support", lesson: "Password resets are done by the customer through the login page; we never set passwords for them.", question: "a user is locked out and asks me to set a new password for them" },
    { channel: "C-support", lesson: "Macros for common answers live in Zendesk under Support > Macros; update the macro, not a copy.", question: "the canned reply about shipping times is out of date, where do I fix it?" },
    { channel: "C-support", lesson: "Feature requests are logged in Productboard with the customer's name, not in Jira.", question: "a customer really wants dark mode, where do I note that?" },
    { channel: "C-support", lesson: "Angry customers threatening to churn are escalated to their account manager the same day.", question: "this customer says they'll cancel if we don't fix it this week" },
    { channel: "C-support", lesson: "Outage replies use the incident macro and link the status page; do not promise a fix time.", question: "everyone is asking when the site will be back up, what should I tell them?" },
    { channel: "C-support", lesson: "Phone support hours are 9 to 5 Eastern; outside them, offer a callback.", question: "a customer in California called at 6pm their time, can someone pick up?" },
    { channel: "C-support", lesson: "Chargebacks are handled by finance; forward the Stripe dispute email to finance@.", question: "Stripe says a customer disputed a payment, what now?" },

    // #infra: servers, access and secrets.
    { channel: "C-infra", lesson: "SSH keys for production servers are issued through Teleport and expire after 12 hours.", question: "my access to the prod boxes stopped working this morning" },
    { channel: "C-infra", lesson: "API keys for third-party services are stored in Vault under secret/vendors, one path per vendor.", question: "where do I put the new Twilio token?" },
    { channel: "C-infra", lesson: "Rotate the database credentials with the rotate-db job; never change them in the console.", question: "the Postgres password leaked in a log, how do we change it?" },
    { channel: "C-infra", lesson: "Terraform changes are applied only by Atlantis from a merged PR, never from a laptop.", question: "can I run terraform apply locally to fix the load balancer?" },
    { channel: "C-infra", lesson: "New AWS accounts are requested from the cloud team with a cost center.", question: "I need a separate AWS sandbox for my experiments" },
    { channel: "C-infra", lesson: "Disk alerts on the Kafka brokers page the data team, not infra on-call.", question: "who gets woken up when a broker runs out of disk?" },
    { channel: "C-infra", lesson: "Kubernetes namespaces are created by the platform team; request one in #platform-requests.", question: "how do I get my own k8s namespace for the new service?" },
    { channel: "C-infra", lesson: "Backups are restored into the restore-test account first, never straight into production.", question: "we lost a table in prod, can I restore last night's snapshot over it?" },
    { channel: "C-infra", lesson: "DNS changes go through a PR to the dns repo and take effect after the nightly sync.", question: "I need a new subdomain for the marketing site" },
    { channel: "C-infra", lesson: "TLS certificates are renewed automatically by cert-manager; an expiring cert means cert-manager is broken.", question: "we got an email that our certificate expires in 5 days, should I renew it?" },
    { channel: "C-infra", lesson: "VPN access for contractors ends with their contract and is renewed through their manager.", question: "the contractor on our team can't connect to the VPN anymore" },

    // #office: the office and the people in it.
    { channel: "C-office", lesson: "Office keys and badges are picked up from reception, and a lost badge is reported to security the same day.", question: "I can't find my badge, what should I do?" },
    { channel: "C-office", lesson: "Meeting rooms are booked in Google Calendar; the big room needs a booking for more than 8 people.", question: "where do I reserve a room for a 12-person workshop?" },
    { channel: "C-office", lesson: "Expenses under $50 need no receipt; everything else goes in Expensify with the receipt within 30 days.", question: "I bought a $120 keyboard, how do I get reimbursed?" },
    { channel: "C-office", lesson: "Parking spots are first come, first served; the two EV chargers are limited to 2 hours.", question: "can I leave my electric car charging all day?" },
    { channel: "C-office", lesson: "Guests sign in on the iPad at reception and must be escorted at all times.", question: "a friend is visiting me at work on Friday, anything I need to do?" },
    { channel: "C-office", lesson: "Holiday requests go in BambooHR at least two weeks ahead and are approved by your manager.", question: "how do I take a week off in August?" },
    { channel: "C-office", lesson: "The office is closed on the last Friday of the month for deep cleaning; work from home that day.", question: "is anyone going to be in the office on the 28th?" },
    { channel: "C-office", lesson: "Hardware requests (laptops, monitors) go through the IT portal, not through expenses.", question: "my laptop is dying, can I buy a new one and expense it?" },
    { channel: "C-office", lesson: "The kitchen fridge is emptied every Friday at 4pm; label anything you want to keep.", question: "who threw away my lunch from the fridge?" },
    { channel: "C-office", lesson: "Fire drills happen on the first Tuesday of the quarter; leave by the nearest stairs, not the lift.", question: "the alarm just went off, do I take the elevator down?" },
    { channel: "C-office", lesson: "Packages for employees are held at reception for one week, then returned to the sender.", question: "I ordered something to the office two weeks ago and never got it" },
  ],
  unrelated: [
    "I lost my house keys on the way home, any tips for finding them?",
    "we're staging a play at my kid's school, any ideas for cheap props?",
    "what's a good strategy to deploy troops early in Risk?",
    "can you review this movie plot for me: a robot learns to paint",
    "how do I get a ticket for the Taylor Swift concert?",
    "my customer service job interview is tomorrow, any advice?",
    "what's the release date of the next Zelda game?",
    "how do I change the password on my home wifi router?",
    "what's a good name for a golden retriever?",
    "can you explain how photosynthesis works?",
    "write a limerick about a cat who loves the office printer",
    "how many calories are in a banana?",
  ],
};
