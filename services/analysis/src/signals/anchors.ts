/**
 * Anchor phrases of the conversation signals (issue 32): short general English, written here for the
 * purpose (none is taken from an evaluation set, bench/data/signals/README.md). A message is scored by
 * how much nearer its embedding lies to the nearest anchor of a cue than to the nearest of its contrast
 * set (cues.ts): the contrast sets hold what is easily confused with the cue and is not it — a person
 * named in a report ("someone stole my card") for escalation, a sad subject for frustration, an ordinary
 * answer or an apology for a bot failure, a thanks that says it still fails for resolution.
 *
 * The lists marked "platform defaults" hold the default fallback, clarification and handover messages
 * that chatbot platforms document and ship (Dialogflow's Default Fallback Intent, Amazon Lex's
 * clarification prompt and abort statement, Rasa's utter_default and utter_ask_rephrase, Microsoft Bot
 * Framework / Copilot Studio's Fallback and Escalate topics, IBM watsonx Assistant's "Anything else"
 * node, Zendesk's and Intercom's bots), written from the AI assistant's knowledge of those documents
 * (issue 32 follow-up, 2026-11-29), not copied from a live page and not from a bench set: deployed bots
 * keep their platform's defaults, so these are what real failures most often say. Close paraphrases of
 * one default are kept to one anchor. The platforms' bare requests to repeat ("Sorry, can you please
 * repeat that?", Amazon Lex's clarification prompt) are left out of the clarification anchors: they are
 * both a failure and a clarification, and as failure's contrast they hid failures that say "I didn't
 * understand" first. Intercom Fin's "Sorry, I don't have the information to answer that" was tried and
 * left out: its nouns drew a plain answer about insurance cover (development set, ins-03); the words
 * cue (cues.ts, inabilityOf) reads "I don't have the information" instead.
 */

/** The end user asks for a person. */
export const ESCALATION_REQUEST_ANCHORS: readonly string[] = [
  'I want to talk to a human',
  'can I speak with a real person?',
  'connect me to an agent please',
  'let me talk to someone from customer service',
  'transfer me to a representative',
  'I need a live operator',
  'get me a manager',
  'is there a human I can chat with?',
  'stop the bot, I want a person',
  'put me through to your support team',
  'can someone from your team help me?',
  'who can I talk to about this?',
  'I would rather discuss this with a person than a bot',
  // A team or a department rather than "a person".
  'I need to speak to someone in the right department',
  'can you pass me on to the team that deals with this?',
  // A person to take the case rather than to talk with.
  'can a person look into this for me?',
  'I need someone from your side to check this',
  // signals-v11, the team's conventions: a call back from a person, or a person's own contact to reach them.
  'can someone call me back?',
  "could you give me your manager's email so I can contact them?",
]

/** The bot hands the conversation over to a person. */
export const HANDOVER_ANCHORS: readonly string[] = [
  "I'm transferring you to a human agent",
  'let me connect you with a member of our team',
  'an agent will join the conversation shortly',
  "I'll hand this over to a colleague who can help",
  'please hold while I put you through to a person',
  'a support specialist will take over from here',
  "I'm passing you to our team now",
  'someone from our team will reply here shortly',
  "I'm bringing in a specialist to help you",
  // By a ticket or a case that people will take up.
  "I've opened a ticket for our support team, they will contact you by email",
  "I've passed your case to the team and they'll get back to you",
  // To a team or a department rather than "a person".
  "I'll transfer you to the right department",
  'you will be connected to the next available adviser',
  // The person arriving: the handover seen from the other side.
  "Hi, my name is Sam from customer care, I'll be helping you from now on",
  "Hello, this is Alex from the support team, I've taken over your chat",
  // Platform defaults (see the top of this file).
  "I'll connect you with a live agent.", // Copilot Studio, Escalate (with a live-agent hand-off)
  'Please wait while I transfer you to an agent.', // Amazon Lex with Amazon Connect
  "I'm transferring you to a live agent now.", // Dialogflow CX, live agent handoff
  'Let me connect you to an agent.', // watsonx Assistant, connect to agent
  'The team will get back to you as soon as they can.', // Intercom
]

/**
 * The escalation contrast's complaints about the chat itself (part of ESCALATION_CONTRAST_ANCHORS since
 * signals-v11, set apart at signals-v65): they keep a complaint alone from reading as a request, but a
 * complaint beside a request ("this bot is useless, get me a person") does not cancel the request: a unit
 * nearest one of them is judged against the other contrasts too (cues.ts, EscalationUnit.pastComplaint).
 */
export const ESCALATION_COMPLAINT_ANCHORS: readonly string[] = [
  'what is the point of this chat?',
  'this bot is useless',
]

/** Mentions of people that ask for no one: reports, stories, complaints about a person. */
export const ESCALATION_CONTRAST_ANCHORS: readonly string[] = [
  'someone stole my card',
  'a person called me pretending to be from the bank',
  'my husband used my account without asking',
  'a man at the shop charged me twice',
  'the courier left my parcel outside',
  'my friend recommended your service',
  'can I add another person to my plan?',
  'who is the account holder?',
  'the human resources department needs a letter',
  'thank you for your help',
  'the staff were very friendly',
  // signals-v11: an address to send something to reaches no one in particular.
  'what email address do I send my invoices to?',
  // Complaints about the chat itself (ESCALATION_COMPLAINT_ANCHORS), last.
  ...ESCALATION_COMPLAINT_ANCHORS,
]

/** The bot says it cannot help, did not understand, or has no answer. */
export const FAILURE_ANCHORS: readonly string[] = [
  "I'm sorry, I didn't understand that",
  "I don't know the answer to that",
  "I can't help with that request",
  "sorry, I'm not able to do that",
  "I don't have any information about that",
  "I'm not sure what you mean",
  'that is outside of what I can help with',
  'sorry, I could not find anything matching your question',
  'I am unable to answer this',
  'something went wrong, please try again later',
  "I'm not able to help with that",
  'I have no details on that topic',
  "I can't do that here",
  // signals-v13: no one to hand over to is a failure to hand over (a live-chat platform's offline message),
  // not a handover, whatever channel it then points to.
  'sorry, no agents are available to chat right now',
  // Platform defaults (see the top of this file).
  "I didn't get that. Can you say it again?", // Dialogflow
  'I missed what you said. What was that?', // Dialogflow
  'Sorry, I could not understand. Goodbye.', // Amazon Lex, abort statement
  "Sorry, I didn't get that. Can you rephrase?", // Rasa, utter_default
  "I'm sorry, I'm not sure how to help with that. Can you try rephrasing?", // Copilot Studio, Fallback
  "I didn't understand. You can try rephrasing.", // watsonx Assistant
  "I'm afraid I don't understand. Please rephrase your question.", // watsonx Assistant
  "I didn't get your meaning.", // watsonx Assistant
  "Sorry, I couldn't find any articles that match your question.", // Zendesk Answer Bot
  "You stumped me! Sadly I don't know how to answer your question.", // QnABot on AWS
  "I'm sorry, I didn't quite understand that. Could you rephrase?", // Rasa, utter_ask_rephrase
  "Can you reword your statement? I'm not understanding.", // watsonx Assistant
]

/** The bot asks the end user to say it again, or more clearly. */
export const CLARIFICATION_ANCHORS: readonly string[] = [
  'could you please rephrase that?',
  'can you say that another way?',
  'could you clarify what you mean?',
  'sorry, can you repeat your question?',
  'what exactly do you mean?',
]

/**
 * The end user says it is asking again: the answer missed what was asked (signals-v11). Read against the
 * requests and social acts (cues.ts): a reply that only asks a new question is not one.
 */
export const REASK_ANCHORS: readonly string[] = [
  "that's not what I asked",
  'you did not answer my question',
  'I already told you that',
  'as I said, it still does not work',
  'let me ask again',
  'to be clear, my question is about my own account',
  'I know that, but that is not my question',
  'I said that already, please read my message',
]

/** What a bot says when it is helping: answers, actions, apologies with a remedy, offers of more help. */
export const ANSWER_ANCHORS: readonly string[] = [
  'here is how you can do that',
  'I have updated your address',
  'your order will arrive on Tuesday',
  'you can reset your password from the settings page',
  'is there anything else I can help you with?',
  "I'm sorry to hear that, let me check for you",
  'sorry for the inconvenience, I have issued a refund',
  'I understand, let me look into this',
  'sure, I can help with that',
  'the fee is ten dollars per month',
  'hello! how can I help you today?',
  'you are welcome, have a great day',
  "I'm sorry.",
  "I'm sorry that happened",
  'sorry about that',
  "I'm sorry for your loss",
  "I'll pass your feedback on to the team",
  "thanks, I'll let our staff know you said so",
  'see you at your appointment',
  'yes, you can do that in the app',
  // What the bot does itself, and what only sounds like passing on: no one takes over.
  'shall I book that for you?',
  'would you like me to reserve it?',
  "done, that's now active on your account",
  'please choose one of the following options',
  "I'll pass your compliments on to them",
  'we sometimes contact customers by phone',
  // signals-v11, the team's conventions: a phone number or opening hours given, or how to add people to an
  // account, are answers; the end user is handed to no one. (A team named with nothing handed to it, "the
  // accounts team deals with invoices", was tried and left out: it drew "I've passed this to our billing
  // team", bench/FINDINGS.md.)
  'you can call our helpline on 0800 123 4567',
  'our phone lines are open 9am to 5pm, Monday to Friday',
  'you can invite colleagues to your account from the settings page',
  // signals-v13 (bench/FINDINGS.md, "fresh4's errors by cause"): a troubleshooting answer that names a
  // fault lay nearest "something went wrong, please try again later"; a question for a detail nearest "sorry,
  // I could not find anything matching your question"; a referral to a professional outside the company
  // nearest "I'm bringing in a specialist to help you". Each is the bot helping, or pointing elsewhere.
  'that error usually means the filter is blocked: switch it off and clean it',
  'which date is it for?',
  'for that, please contact your doctor',
]

/** Anger, annoyance or disappointment aimed at the service or the bot. */
export const FRUSTRATION_ANCHORS: readonly string[] = [
  'this is ridiculous',
  'you are useless',
  'this is not helping at all',
  "I'm so fed up with this service",
  'this is the worst support I have ever had',
  'why is this so hard?',
  "I'm really annoyed, nothing works",
  'what a waste of time',
  'I am very disappointed with your company',
  'are you even listening to me?',
  'I keep getting the same useless answer',
  // signals-v15: was "unbelievable, I am going to cancel": its verb drew every plain request to cancel a
  // booking or a plan nearer frustration than the requests (bench/FINDINGS.md). A threat to leave says it.
  'unbelievable, I am going to switch to another company',
  'this is absurd',
  'your company is a joke',
  'what is the point of this?',
  'I am really unhappy with your service',
  // signals-v16: was "nobody ever fixes anything": its verb drew plain reports of a visit to fix something
  // ("…said he would need to come back to fix a sticking key") nearer frustration than the reports.
  'nobody ever sorts anything out here',
]

/** Sad or bad subjects told plainly, and plain problem reports: not frustration with the service. */
export const FRUSTRATION_CONTRAST_ANCHORS: readonly string[] = [
  'my card was stolen',
  'my father passed away and I need to close his account',
  'I lost my job and cannot pay this month',
  'my phone broke in an accident',
  'I was robbed yesterday',
  'I am sick and cannot come to the appointment',
  'my flight was cancelled because of the storm',
  'the package arrived damaged',
  'I was charged twice',
  'the app crashes when I open it',
  "I can't log in to my account",
]

/** The end user confirms that it worked, or thanks at the end. */
export const RESOLUTION_ANCHORS: readonly string[] = [
  'thanks, that worked',
  'great, it works now',
  'that solved my problem, thank you',
  'perfect, all sorted',
  'thank you so much for your help',
  'problem fixed, thanks',
  "ok that's all I needed, thanks",
  'awesome, I can see it now',
  "it's working again, thanks a lot",
  'found it, thank you',
  'done, thanks!',
  'thanks',
]

/** Thanks or acknowledgements that say it is not solved, and new problems. */
export const RESOLUTION_CONTRAST_ANCHORS: readonly string[] = [
  'thanks but it still does not work',
  "that didn't help",
  'it is still broken',
  'no, that is not what I asked',
  'I tried that already',
  'ok, and how do I change my email?',
  'the error is still there',
  'I still have the same problem',
  'ok',
  'alright',
  'cool',
  'got it',
  'I see',
  'good to know',
  'will do',
  'yes please',
]
