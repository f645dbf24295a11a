/**
 * Anchor phrases for the sentiment head: what end users write to a company's support, in many kinds of
 * business, written for this project (by the engineer of issue 32, an AI coding session) before any
 * measurement of the learned model, and never edited after reading a benchmark's errors. They are
 * embedded with the analyzer's model and join the training data as labelled examples, so the head learns
 * where complaints, plain requests and thanks lie in the embedding space: service failures (delays, wrong
 * charges, outages, broken promises, losses, waiting, threats to leave) stated as facts, which the generic
 * corpora (Reddit comments, reviews, tweets about life) seldom hold; and requests that mention a problem
 * word without having one. Not a word list: nothing matches their words at run time.
 */

/** A failure of the service, or dissatisfaction with it, stated or implied. */
export const COMPLAINT_ANCHORS: readonly string[] = [
  // apps and software
  'the app crashes every time I open it',
  'your app keeps logging me out',
  'the update broke everything',
  'I still cannot log in after resetting my password twice',
  'the website has been down all morning',
  'the page just keeps loading forever',
  'I reported this problem weeks ago and it is still there',
  'nothing works since yesterday',
  'your software deleted all my files',
  'the sync stopped working and I lost a week of work',
  'error 500 again when I try to pay',
  'the button does nothing',
  // orders, shops, delivery
  'my order never arrived',
  'the package was supposed to be here last week',
  'I received the wrong item',
  'the parcel arrived damaged',
  'still waiting for my refund',
  'you promised a refund two weeks ago and nothing',
  'half of my order was missing',
  'the tracking has not updated in ten days',
  'the food arrived cold and an hour late',
  'the courier said he delivered it but nothing is here',
  // billing and money
  'I was charged twice for the same order',
  'you took money from my account without asking',
  'why did my bill go up again',
  'you raised the price and did not even tell me',
  'there is a fee on my statement I never agreed to',
  'I cancelled my subscription and you still charged me',
  'my transfer has not arrived after five days',
  'the money was taken but the order shows as unpaid',
  // travel
  'they cancelled our booking at the last minute',
  'we have been sitting on the plane for two hours',
  'the airline lost my suitcase',
  'the train was late again and I missed my connection',
  'the hotel room was dirty',
  'I was rebooked on a flight the next day with no compensation',
  // telecom, utilities
  'my internet has been dropping all week',
  'no signal at home since the outage',
  'I took a day off for the installation and nobody came',
  'the power has been off for hours and no update from you',
  // service and waiting
  'I waited an hour on the phone and then got disconnected',
  'nobody answers my emails',
  'I keep getting passed from one agent to another',
  'your chatbot is useless',
  'I asked the same question three times and got no answer',
  'this is the worst customer service I have ever had',
  'you keep telling me it is fixed but it is not',
  'still not resolved',
  'that did not help at all',
  'the agent hung up on me',
  // disappointment, leaving
  'I will take my business to a competitor',
  'I want to cancel, this is not worth it',
  'I will never order from you again',
  'very disappointed with the quality',
  'not what I paid for',
  'the product stopped working after a week',
  'this is ridiculous',
  'I am so fed up with this',
  'absolutely unacceptable',
  'why is this so complicated',
  'how many times do I have to ask',
  'is anyone actually going to help me',
  // prices, changes, leaving
  'my premium went up for no reason',
  'the new prices are outrageous',
  'you changed the plan without asking me',
  'they removed the feature I was paying for',
  'I am going to take my business elsewhere',
  'maybe I should just go with another company',
  'seriously considering cancelling my membership',
  'I have been a loyal customer for years and this is how you treat me',
  'nobody warned us about the change',
  'this used to work fine before',
  'you lost my booking',
  'we waited three hours at the gate',
  'I was overcharged',
  'your agent was rude to me',
  'another price hike, really?',
  'my rate jumped this month and nobody explained why',
  'the fees went up and we were never told',
]

/**
 * Sad or worrying things that happen to the customer, not failures of the service: negative in tone, not
 * frustration with the company (the frustration head learns them as its counter-examples).
 */
export const MISFORTUNE_ANCHORS: readonly string[] = [
  'someone took my wallet on the train',
  'my father passed away last month',
  'I lost my job and cannot pay this month',
  'our house was flooded',
  'I was in a car accident yesterday',
  'my dog is very sick',
  'I am going through a divorce',
  'my phone fell in the lake',
  'I am in hospital and cannot come to the appointment',
  'my laptop was stolen from my car',
  'I am worried about my elderly mother',
  'a storm damaged our roof',
  'my husband died and the account was in his name',
  'I have been ill for weeks',
  'someone hacked my email',
  'I am scared I will not be able to pay the rent',
]

/** A question, request or information with no problem stated or implied. */
export const NEUTRAL_ANCHORS: readonly string[] = [
  'where do I change my login email',
  'where can I find my invoice',
  'can someone else pick up my parcel',
  'what are your opening hours',
  'I would like to upgrade my plan',
  'how do I cancel my subscription',
  'can I pay by bank transfer',
  'what is the baggage allowance',
  'do you have a branch in Leeds',
  'the jacket does not fit, can I exchange it for a larger size',
  'how long does delivery usually take',
  'what happens to my points if I cancel',
  'how do I set up two-factor authentication',
  'I need a new PIN',
  'can I talk to someone about my account',
  'please change the name on my account',
  'is there a student discount',
  'what does this error code mean',
  'my order number is 48213',
  'I booked a flight for next Monday',
  'can I add a second user to my account',
  'how do I export my data',
  'which plan includes priority support',
  'I am moving house next month, how do I transfer my contract',
  'do you have this in blue',
  'when will my card arrive',
  'can you check the status of my claim',
  'what documents do I need to open an account',
  'I would like to book a table for four',
  'is the store open on Sunday',
  'hello',
  'alright',
  'yes please',
  'my email is anna at example dot com',
  'I need a quote for my car',
  'how do I file a claim',
  'can I change my seat',
  'could you explain the items on my statement',
  'where is the nearest branch',
  'please send me the terms and conditions',
]

/** Thanks, praise or relief. */
export const POSITIVE_ANCHORS: readonly string[] = [
  'thank you so much, that fixed it',
  'great, it works now',
  'thanks for the quick help',
  'you were very helpful',
  'that is just what I was looking for',
  'the new update is fantastic',
  'delivery was super fast, thank you',
  'you guys are the best',
  'all sorted now, cheers',
  'I love the new design',
  'that was easy, thanks a lot',
  'the agent was really kind and patient',
  'no more errors since the update',
  'my refund arrived, thank you',
  'awesome, you made my day',
]
