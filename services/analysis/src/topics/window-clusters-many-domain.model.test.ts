import { beforeAll, expect, it } from 'vitest'
import { describeWithTestModel, loadTestEmbeddingModel } from '../../test/test-model.ts'
import type { EmbeddingModel } from '../providers/embedding-model.ts'
import {
  groupSimilarity,
  meanPairwiseCosine,
  nearestNeighbours,
  WINDOW_CLUSTERING,
  windowClusters,
} from './window-clusters.ts'

/** The many-domain gate's second reading of a window: how closely groups of 8 gather (under 0.56). */
const groupsOf8 = (vectors: readonly Float32Array[]) =>
  groupSimilarity(nearestNeighbours(vectors, WINDOW_CLUSTERING.neighbours).distances, WINDOW_CLUSTERING)

// Regression (issue 31): a young chatbot of many small domains (bench:topics-multiturn's A, 268 requests
// of 53 shops) re-clustered into 5 topics, its largest theme 83 %: its window compared its runs before
// splitLoose, and excess of mass at every size but 3 selects a few halves of such a window. Here the
// first two requests of each of CLINC150's 150 intents (its train split, CC BY 3.0, Larson et al. 2019;
// not a set the choice was measured on), 300 requests of ten domains, embedded by the real model: compared
// before the split they made 16 topics, the largest 39 requests of 22 intents.

/** CLINC150 train split: the first two requests of each intent, ten domains in CLINC150's order. */
const REQUESTS: Readonly<Record<string, readonly string[]>> = {
  freeze_account: [
    'can you block my chase account right away please',
    'i want my chase account blocked immediately',
  ],
  routing: [
    'where can i see the routing number for bmo',
    "i need to know what my wife's account's routing number is",
  ],
  pin_change: [
    'how do i change my pin for number for my abc bank account',
    'what do i need to do to change my abc bank account pin number',
  ],
  bill_due: ['when should i pay my bill by', 'when is my car insurance due'],
  pay_bill: ['i want to pay my bill, please', 'pay my water bill with my charles schwab account'],
  account_blocked: [
    'why is there a hold on my american saving bank account',
    'i am nost sure why my account is blocked',
  ],
  interest_rate: ['i want to know my interest rate', 'tell me my interest rate'],
  min_payment: [
    "what's the minimum i owe on the car payment",
    "what's the least amount i need to pay on the electric bill",
  ],
  bill_balance: [
    'the bill for water and electricity is how much',
    "what's my bill for water and electricity",
  ],
  transfer: [
    'i need $20000 transferred from my savings to my checking',
    'complete a transaction from savings to checking of $20000',
  ],
  order_checks: [
    'what is the process to get some more checkbooks mailed to me',
    'how do i get more checkbooks mailed to me',
  ],
  balance: ['savings account balance at chase bank please', 'check chase bank for my checking balance'],
  spending_history: [
    'how much did i spend at restaurants last week',
    'how much have i spent lately on eating out',
  ],
  transactions: [
    "before i make my mastercard payment can you tell me what i've recently charged on it",
    'please tell me all of my recent transactions',
  ],
  report_fraud: ["i'm afraid this charge on my account is fraud", "i think there's fraud on my account"],
  replacement_card_duration: ['tell me about today weather', 'can my debit card be replaced quickly'],
  expiration_date: ['how long til my visa card expires', 'on what date does my visa card expires'],
  damaged_card: [
    'let my credit card company know that my card split in half',
    'how do you report a burned debit card',
  ],
  improve_credit_score: [
    'what steps should i take to improve my credit score',
    'give me a recommendation to improve my credit score',
  ],
  report_lost_card: [
    'immediately the credit card company must be told that i lost my card from them',
    'i lost my debit card and need it reported as lost',
  ],
  card_declined: ['why did my card not get accepted', 'why did my card not get accepted there'],
  credit_limit_change: [
    'can you see if i can get a higher limit on my discovery card',
    'can my credit limit on my discovery card go up',
  ],
  apr: ['is the apr on my credit card good', 'how good is the apr on my credit card'],
  redeem_rewards: [
    'i am ready now to cash in on the many credit card points i have saved up',
    "i have credit card points but don't know how to use them",
  ],
  credit_limit: [
    'how high is my credit limit for my old navy card',
    'how high is my credit limit for my target card',
  ],
  rewards_balance: [
    'how high are the rewards on my discover card',
    'how many rewards do i now have on my hy-vee card',
  ],
  application_status: [
    'when will my application for my credit card be processed',
    'has the discover card approved my app',
  ],
  credit_score: ['how do i look up my credit score', 'please look up my credit score'],
  new_card: ['how can i apply for a discover card', 'can i apply for a discover card'],
  international_fees: [
    'are there any transaction fees associated with my chase card if i am in tokyo',
    'does my usaa card have international transaction fees',
  ],
  food_last: ['jello should stay in the fridge for how long', 'when will my milk be no good'],
  confirm_reservation: [
    'verify that i have reservations at chilis for john doe',
    'can you check my reservations for mortons under david winters',
  ],
  how_busy: ['do you know how long of a wait it will be', 'how long is the restaurant line before we go'],
  ingredients_list: [
    'what do you put in chicken noodle casserole',
    'what goes into chicken noodle casserole',
  ],
  calories: [
    'can you provide me the calories in the smoothie',
    'can you tell me the calories for the cheeseburger',
  ],
  nutrition_info: ["what's the nutritional info for spaghetti", "what's the nutritional info for pizza"],
  recipe: ['whats the best way to roast a chicken', 'how do i make pie crust'],
  restaurant_reviews: ['do people like the donuts at tgi', 'are the donuts at tgi well reviewed'],
  restaurant_reservation: [
    'you need to call the melt in lakewood for a table for at 2:00, monday, the first week in march',
    'hey computer, make a reservation for 2 for my parents at red lobster on wednseday next, 2:00pm if possible',
  ],
  meal_suggestion: ['can you give me a french dinner suggestion', 'suggest a meal from laos to me, please'],
  restaurant_suggestion: [
    'can you suggest a restaurant for me to eat tonight',
    'tell me where to go since i want to eat out tonight',
  ],
  cancel_reservation: [
    'remove my reservation at outback for timmy',
    "can you cancel the reservation for kyle's party at red lobster",
  ],
  ingredient_substitution: ['what about changing the sugar for baking soda', 'can i swap sugar for salt'],
  cook_time: ['how long will the turkey take to cook', 'so how long do you think the chicken will take'],
  accept_reservations: [
    'can i make a reservation for redrobin',
    'is it possible to make a reservation at redrobin',
  ],
  what_song: ['which song is playing', "what's this song called"],
  play_music: ['can i get some music by three six mafia in here', 'what does x\u2019s music sound like'],
  todo_list_update: [
    'i need to add the chore of vacuuming to my task list',
    'put wash the counters down on my list of pending tasks',
  ],
  reminder: ['tell me my reminders', 'tell me my current reminders list'],
  reminder_update: [
    'remind me to call my mother saturday morning',
    'please set up a reminder i need to remember to ask about work',
  ],
  calendar_update: [
    'add my dentist appointment to the calendar',
    'add a vet appointment for 5 pm on saturday',
  ],
  order_status: ['can you find my package in transit', 'track my package please'],
  update_playlist: [
    'insert what i am listening to into my jazz playlist',
    'add this tune to my jazz playlist',
  ],
  shopping_list: [
    'would you let me know what is on my shopping list',
    'list out what is on my shopping list',
  ],
  calendar: ['does my calendar have anything for january 1st', 'what is there on january 1st on my calendar'],
  next_song: ['go past this song', 'put on the next song'],
  order: ['can you please order me more plastic bags', 'i need you to order some more lysol for me,please'],
  todo_list: ['what are the things that i have for today', 'what is left to do today'],
  shopping_list_update: ['delete fries from shopping list', 'take off fries from the shopping list'],
  smart_home: ['can you please turn on my furnace', 'oven should be set to 350 now'],
  current_location: ['check maps for my location', "i'm lost, can you tell me where i am"],
  oil_change_when: ['when should i change my car oil', 'do i need to change my oil'],
  oil_change_how: ["how do i change a car's oil", 'can you find instructions on how to change oil in a car'],
  uber: ['book an uber for 6 people to go to the movies', 'i need an uber for 6 people to the movies'],
  traffic: [
    'is there any traffic congestion on my way to the closest whole foods',
    'how bad is traffic to the closet atm machine',
  ],
  tire_pressure: ["how's the air pressure in my tires", "what's my tires current air pressure"],
  schedule_maintenance: [
    'my car needs to be brought for maintenance',
    'could you schedule car maintenance for me',
  ],
  gas: ['what level is my gas tank at', "where's the gas tank level at"],
  mpg: ['what kind of mileage do i get out of gas', "what's the fuel economy of my car"],
  distance: ['estimated time to airport from current location, la', 'how long to get to the airport in la'],
  directions: [
    "i'm at home, so where is the closest starbucks",
    "what's the distance between home and the closest starbucks",
  ],
  last_maintenance: [
    'tell me when my car last had its oil changed',
    'when did i last do maintenance on my car',
  ],
  gas_type: ['what kind of gasoline can this car take', 'is there a certain type of gas i need to use'],
  tire_change: [
    'tell me the status of my tires and when i need to replace them',
    'how many more miles can i drive before changing my tires',
  ],
  jump_start: ['what do i do if my car battery is dead', 'show me the way to jump start a battery'],
  plug_type: [
    "do i need a socket converter if i'm going to mexico",
    'does england have a different plug type and if so what is it',
  ],
  travel_notification: [
    'im going to be in canada from august 10th until august 12th',
    'im going to be in slovakia from january 16th until january 19th',
  ],
  translate: [
    'what expression would i use to say i love you if i were an italian',
    "can you tell me how to say 'i do not speak much spanish', in spanish",
  ],
  flight_status: [
    'what is the projected time frame for the flight to land',
    'is there any news on flight dl123',
  ],
  international_visa: [
    'to visit cambodia, do i need an international visa',
    'do i need to get a visa to visit canada',
  ],
  timezone: ['timezone of cuba', 'what is the time zone of france'],
  exchange_rate: [
    'how many pesos can i get for one dollar',
    'what is the current going rate for exchanging dollars for pesos',
  ],
  travel_suggestion: [
    'can you give me some suggestions to go site seeing when i get there',
    "can you get me any recommendations for the place i'm traveling to",
  ],
  travel_alert: [
    'does ireland have any travel alerts i should be aware of',
    'does north korea have any travel alerts i should be aware of',
  ],
  vaccines: [
    'are there any specific shots i should get before traveling to england',
    'what are the recommended shots to get before i travel to south korea',
  ],
  lost_luggage: [
    "locate lost luggage from flight america airlines in o'hare",
    "on flight america airlines in o'hare lost luggage",
  ],
  book_flight: [
    "what's the cheapest fares from lax to sfo for round trip flights leaving april 1st and returning april 7th",
    'for the dates april 1st to the 7th, find me round trip air tickets from la to sfo',
  ],
  book_hotel: [
    'i need a bed in brownsburg near walmart from apil 4th until the 5th',
    'i need a room in indianapolis near the track from may 2nd through the 5th',
  ],
  carry_on: [
    'if i fly american to los angeles, how many carry ons am i allowed',
    'how many carry ons will american let me take for a flight to los vegas',
  ],
  car_rental: [
    'i want to reserve a convertible from july 2nd through july 18th for los angeles',
    "i'd like to rent a vehicle from nov 1st to nov 15th in san antonio and i need a 15 passenger van",
  ],
  weather: ['what are the conditions like in orlando', "what's the temperature like in tampa"],
  alarm: ['wake me up at noon tomorrow', 'set my alarm for getting up'],
  date: ["i would like to know what today's date is", "i need information on today's date"],
  find_phone: ['i need help finding my mobile phone', 'help me figure out where my cell phone is'],
  share_location: ['tell lydia and laura where i am located', 'share my location with brad and terry'],
  timer: ['please set a 4 minute timer', 'please set a timer for 6 minutes'],
  make_call: ['place a phone call to yiming', 'phone lobby'],
  calculator: ['what is 7 x 7', 'please add 456 and 781 for me'],
  definition: ['what is the meaning of realism', 'what is regard mean'],
  measurement_conversion: ['how many centimeters are in an inch', 'whats 5 feet in inches'],
  flip_coin: [
    'please flip a coin and tell me what side it lands on',
    'will you flip a coin so i can make a choice',
  ],
  spelling: ['what is the spelling of potato', 'spell potato'],
  time: ['what time is it in punta gorda, florida', 'what time is it in glenwood springs, co'],
  roll_dice: ['will you roll a d20', 'will you roll a 12 sided dice'],
  text: [
    'can you text elizabeth and tell them i forgot to bring drinks',
    'text wenona and tell her we will be there tomorrow',
  ],
  pto_request_status: [
    'have they approved my vacation request yet',
    'give me the status of my vacation request',
  ],
  next_holiday: ['when is the upcoming holiday, please', 'when is the upcoming holiday'],
  insurance_change: ['how to create a new aaa insurance plan', 'website to start aaa new insurance plan'],
  insurance: ['what do my health benefits consist of', 'what health benefits are available to me'],
  meeting_schedule: ["when is today's meeting with john", 'when is my meeting with dan scheduled for'],
  payday: ['on what date do i get paid', 'what day do i get my paycheck'],
  taxes: ['how much are my state taxes', 'what will my state taxes cost'],
  income: ['can you tell me what my total income is for the pay period', 'please give me my salary figure'],
  rollover_401k: ['ways to transfer my 401k', 'where do i go the transfer my 401k'],
  pto_balance: [
    'what is my vacation schedule look like',
    'can you explain to me what type of vacation days i have still',
  ],
  pto_request: [
    'how do i put in a pto request for the first to the ninth',
    'am i allowed to put in a pto request for now to april',
  ],
  w2: ['where can i locate my w2 so i can do my taxes', 'where is the w-2 form located'],
  schedule_meeting: [
    'i want to know if there is meeting room available at 8',
    'meeting room availability from 8:00 please',
  ],
  direct_deposit: [
    'do a websearch for direct deposit set up',
    'search google for how to set up direct deposit',
  ],
  pto_used: [
    'have i used half of my days off yet',
    "go to my job portal, i'd like to know how many days off i have used",
  ],
  who_made_you: ['who formed you', 'who constructed you'],
  meaning_of_life: ['does life have meaning', 'is being alive the meaning of life'],
  who_do_you_work_for: ['who is your employeer', 'who is the boss of you'],
  do_you_have_pets: ['what type of pet do you have', 'share some information about your pets with me'],
  what_are_your_hobbies: ['what kinds of things are you into', "what's your favorite hobby"],
  fun_fact: ['lets hear an interesting fact about funko pops', 'know any interesting facts'],
  what_is_your_name: ["what's your full name", "i didn't get your name"],
  where_are_you_from: ['where is your place of origin', 'what is your place of origin'],
  goodbye: ['syonara, ai device!', 'goodbye, helpful ai device!'],
  thank_you: ['you have been a big help, thank you so much', 'i appreciate your help, thank you'],
  greeting: ["how's everything", 'how are things going'],
  tell_joke: ['please, recite to me some good one liners', 'do you know any good jokes about zebras'],
  are_you_a_bot: [
    'may i know if you are a real person or an ai',
    'i need to know if you are a real person or an ai',
  ],
  how_old_are_you: ['what is your birthday again', 'how many years on the earth'],
  what_can_i_ask_you: [
    'what things can you help me with exactly',
    'what are the things you can help me with',
  ],
  change_speed: ['can you slow your speaking down', "slow down your talking too fast i don't understand you"],
  user_name: ['you refer to me as what', 'by what name do you refer to me'],
  whisper_mode: ['change to whisper mode', 'change mode to whisper'],
  yes: ['yep', 'that is affirmative'],
  change_volume: ['raise the volume to 4 please', 'please set the volume to 4'],
  no: ["no, that's incorrect", "that's not true"],
  change_language: [
    'adjust your language setting to english',
    'change and set your language setting to english',
  ],
  repeat: ["i didn't hear you please repeat", 'please repeat'],
  change_accent: ['use a different accent', 'try using a different accent'],
  cancel: ["please cancel what you are doing, i've changed my mind", 'never mind, cancel that'],
  sync_device: ['please link with my phone', 'please connect the device to my phone'],
  change_user_name: [
    'please change the name you refer to me by',
    'how do i change the name you use to address me',
  ],
  change_ai_name: ['rename yourself to betty', 'can i call you betty'],
  reset_settings: [
    'make the settings go back to the original',
    'go back the the settings you had originally',
  ],
  maybe: ["i don't know the answer", "i'm unsure"],
}

/** CLINC150 train split: the third request of each intent (a window of 450 with REQUESTS: topics14). */
const THIRD: Readonly<Record<string, string>> = {
  freeze_account: 'i need you to block my chase account immediately',
  routing: 'how do i locate my routing number for tax reasons',
  pin_change: 'i have no idea what the pin is for my checking account',
  bill_due: "when's the gas bill due",
  pay_bill: "i'd like to pay my bill",
  account_blocked: 'why is there a hold on my capital one checking account',
  interest_rate: 'what interest rate am i paying',
  min_payment: "what's the smallest amount i can pay on the water bill",
  bill_balance: 'for my water and electricity, how much is the bill',
  transfer: 'transfer $20000 from my savings account to checking account',
  order_checks: 'if i need more checkbooks maild to me what should i do',
  balance: 'what is my checking account balance at chase',
  spending_history: 'what did i spend at the grocery store yesterday',
  transactions: 'i want to pay my amazon credit card but i need to know the last few transactions',
  report_fraud: 'i think i have fraud on my account from walmart',
  replacement_card_duration: 'how long does visa take to get me a new card',
  expiration_date: 'on what month and year does my card expire',
  damaged_card: 'my card split in half, how do i report it',
  improve_credit_score: 'what can i do to raise my credit score',
  report_lost_card: "i can't seem to find my gold card and want it reported as lost",
  card_declined: 'please tell me why did my card not get accepted',
  credit_limit_change: 'may i have a higher limit on my mastercard',
  apr: 'do i have a good apr on my credit card',
  redeem_rewards: 'walk me through the best ways to use my credit card points',
  credit_limit: 'what is the credit limit for my usaa card',
  rewards_balance: "what's the current reward amount on my mastercard",
  application_status: 'do you know if my amex card app went through',
  credit_score: 'can you figure out how to find my credit score',
  new_card: 'how do applications for discover cards work',
  international_fees: 'does my bank of the west card have international transaction fees',
  food_last: 'when will my eggs go bad',
  confirm_reservation: 'can you check for reservations at wongs chinese for john acer',
  how_busy: "how long will it take to get seated at needham's",
  ingredients_list: 'what do i need to make chicken noodle casserole',
  calories: "i'd like the calories for this chicken breast",
  nutrition_info: 'how healthy are potato skins',
  recipe: 'find a recipe for german chocolate cake',
  restaurant_reviews: 'how are the donuts reviews at tgi',
  restaurant_reservation:
    "i think we should reserve dad's regular table friday for 6 people, use his name, make that close to 4:00 pm at the club",
  meal_suggestion: 'can you give me a vietnamese meal suggestion',
  restaurant_suggestion: "i'm craving for italian food, where should i go",
  cancel_reservation: 'cancel my party reservation for brad at longhorn',
  ingredient_substitution: 'would it be possible to replace the salt with baking soda',
  cook_time: 'how long does pizza take to cook',
  accept_reservations: 'does redrobin take reservations',
  what_song: 'what song is this',
  play_music: 'may i hear some music by fleet foxes',
  todo_list_update: 'take doing the dishes off my todo list',
  reminder: 'please read my reminders',
  reminder_update: 'make a reminder for me to do my resume',
  calendar_update: 'i need to edit this event out of my calendar',
  order_status: 'help me find my package',
  update_playlist: 'can you add this song to my jazz playlist',
  shopping_list: 'i need for you to tell me what is on my shopping list',
  calendar: 'are there any events on my calendar for january 1st',
  next_song: 'please play the next song',
  order: 'i need some more lysol, could you order me some',
  todo_list: 'what do i have to do today',
  shopping_list_update: 'please take away the fries from the shopping list',
  smart_home: 'what temp is the ac at',
  current_location: 'how can i go about finding my location right now',
  oil_change_when: 'how often do you have to change your oil',
  oil_change_how: 'what do i need to change my oil',
  uber: 'book a 6 person uber to the movies',
  traffic: 'is traffic bad on my way to the next mcdonalds',
  tire_pressure: "what's the amount of air in my tires right now",
  schedule_maintenance: 'i need someone to look at my car because my check engine light is on',
  gas: 'how does my gas tank look',
  mpg: 'how many miles per gallon do i get in my car',
  distance: 'how early should i leave to the airport in la',
  directions: 'is there a starbucks close to home',
  last_maintenance: 'when did i last take my car in for maintenance',
  gas_type: 'i need to know what kind of gas i can use on this car',
  tire_change: 'how many miles can i drive before changing my tires',
  jump_start: 'how can i replace my car battery',
  plug_type: 'is there a conversion plug if you travel to australia',
  travel_notification: 'im going to be in paraguay from january 7th until january 10th',
  translate: "what is the equivalent of, 'life is good' in french",
  flight_status: 'what is the word on flight dl123',
  international_visa: 'will i need a visa to visit ireland',
  timezone: 'french time zone',
  exchange_rate: 'tell me the exchange rate between dollars and pesos',
  travel_suggestion: 'please suggest some fun tourist activities in tokyo',
  travel_alert: 'are there any travel alerts for russia',
  vaccines: 'what are the recommended shots to get before i travel to england',
  lost_luggage: "in o'hare lost luggage on flight america airlines",
  book_flight: 'what southwest flights are there for lax to sfo arriving april 1st and returning april 7th',
  book_hotel: 'i need lodging in lizton near the ice cream parlor from may 3rd until the 8th',
  carry_on: 'if i take a flight on pan am to denver, how many carry ons are included',
  car_rental:
    "i want to rent the cheapest car for charlottesville, virginia for march 7th through 10th, that's monday, tuesday, wednesday and thursday",
  weather: "what's the forecast like for pittsburgh",
  alarm: 'make sure my alarm is set for three thirty in the morning',
  date: 'tell me what date it is please',
  find_phone: 'give me a hand finding my mobile device',
  share_location: 'tell john and sam where i am',
  timer: 'set a timer for 5 minutes',
  make_call: 'can you call dominos pizza',
  calculator: 'what is 8 factorial',
  definition: 'what is the meaning of interorganizational',
  measurement_conversion: "what's 32 degrees fahrenheit in celsisus",
  flip_coin: 'flip a two sided coin and tell me what it lands on',
  spelling: 'give me the spelling of potato',
  time: 'what time is it in fredericksburg, tx',
  roll_dice: 'will you roll a 10 sided dice',
  text: 'text christopher and tell him i will stop by',
  pto_request_status: 'am i going to be able to get my vacation request',
  next_holiday: 'what day is our next free day',
  insurance_change: 'aaa insurance start new plan',
  insurance: 'what health benefits can i use',
  meeting_schedule: 'when is the meeting with homer scheduled for',
  payday: 'i need to know when to expect my next paycheck',
  taxes: 'how much are taxes in my state',
  income: 'i need you to tell me my salary',
  rollover_401k: 'who do i go to, to transfer my 401k',
  pto_balance: 'what type of vacation schedule do i have left',
  pto_request: 'is there a time i can put in a pto request for dec 2 to new years',
  w2: 'where can i locate my w-2 form',
  schedule_meeting: 'are there any meetings room available between 8:00 and 9:00 am',
  direct_deposit: 'info on setting up direct deposit',
  pto_used: 'what amount of days off have i already utilized',
  who_made_you: "what's your design company",
  meaning_of_life: 'what is the real meaning of life',
  who_do_you_work_for: 'i gotta know who is your boss',
  do_you_have_pets: 'do you have any type of pet',
  what_are_your_hobbies: 'what do you like to do in your spare time',
  fun_fact: 'what is one fun fact',
  what_is_your_name: "what's should i call you by",
  where_are_you_from: 'what is your country of origin',
  goodbye: 'bye-bye',
  thank_you: 'i really appreciate your help, thank you',
  greeting: 'hello, anyone there',
  tell_joke: 'can you tell me any truly funny knock knock jokes',
  are_you_a_bot: 'i want to know if you are a real person or an ai',
  how_old_are_you: 'what year were you born',
  what_can_i_ask_you: 'what exactly can you help me with',
  change_speed: "you're talking too fast i need you to slow it down",
  user_name: 'what name do you use when addressing me',
  whisper_mode: 'whisper mode off',
  yes: 'what you just said is true',
  change_volume: 'please increase the volume to 4',
  no: "that is not true, it's false",
  change_language: 'set your language setting to english',
  repeat: 'i want you to repeat that',
  change_accent: 'speak in a different accent',
  cancel: 'stop working on it, i need something else',
  sync_device: 'please link up to my phone',
  change_user_name: 'is there a way i can change the name you use to address me',
  change_ai_name: 'rename bob to betty',
  reset_settings: 'change settings to how they were originally',
  maybe: 'shit if i know',
}

describeWithTestModel('a small many-domain window, with the real model (issue 31)', () => {
  let model: EmbeddingModel
  beforeAll(async () => {
    model = await loadTestEmbeddingModel()
  })

  it('keeps its distinct requests apart: topics for a fifth of its intents at least, none holding a tenth of them', async () => {
    const intents = Object.entries(REQUESTS).flatMap(([intent, texts]) => texts.map(() => intent))
    const vectors = await model.embed(Object.values(REQUESTS).flat())
    const count = Object.keys(REQUESTS).length
    const byTopic = (topics: readonly number[]) => {
      const members = new Map<number, Set<string>>()
      topics.forEach((topic, i) => {
        members.set(topic, (members.get(topic) ?? new Set()).add(intents[i]!))
      })
      return [...members.values()]
    }
    // The gate reads the window in the model's space: 150 intents of ten domains lie apart on average
    // (0.095 here), under its bar (0.13), on any CPU and at any UMAP seed.
    expect(meanPairwiseCosine(vectors)).toBeLessThan(WINDOW_CLUSTERING.manyDomainCosine - 0.01)
    // Two requests an intent: a request's seventh neighbour lies in other intents, far under the second
    // bar (0.56; intents of 20 requests read 0.50-0.64).
    expect(groupsOf8(vectors)).toBeLessThan(WINDOW_CLUSTERING.manyDomainGroupSimilarity - 0.1)
    const topics = byTopic(windowClusters(vectors))
    expect(topics.length).toBeGreaterThanOrEqual(count / 5)
    expect(Math.max(...topics.map((t) => t.size))).toBeLessThan(count / 10)
    // Without the many-domain path (a bar no window reads under) the window lumps them.
    const lumped = byTopic(windowClusters(vectors, [], { ...WINDOW_CLUSTERING, manyDomainCosine: -1 }))
    expect(lumped.length).toBeLessThan(topics.length)
  })

  // Regression (issue 31, helper topics14): a window of 375–499 requests tried min_cluster_size 8 alone and
  // never the many-domain path; the 300 requests above, then a third request of each intent (450) came out
  // in 21 topics. Under the noise gate this replaced, the window's reading sat at the bar (0.16–0.22 over
  // UMAP seeds, up to 0.24 under a ±0.001 jitter of each component of the vectors), so whether it was
  // taken followed the CPU's rounding of the embeddings (taken on the machine this was written on, not on
  // an AVX2-only EPYC; bench/FINDINGS.md, "the many-domain gate is a coin flip near its bar"); the mean
  // pairwise cosine reads it far under its bar.
  it('takes the many-domain path in a window of 375–499 requests too: 450 requests of 150 intents', async () => {
    const texts = [
      ...Object.values(REQUESTS).flat(),
      ...Object.keys(REQUESTS).map((intent) => THIRD[intent]!),
    ]
    const intents = [
      ...Object.entries(REQUESTS).flatMap(([intent, two]) => two.map(() => intent)),
      ...Object.keys(REQUESTS),
    ]
    const vectors = await model.embed(texts)
    expect(vectors).toHaveLength(450)
    const count = Object.keys(REQUESTS).length
    const byTopic = (topics: readonly number[]) => {
      const members = new Map<number, Set<string>>()
      topics.forEach((topic, i) => {
        members.set(topic, (members.get(topic) ?? new Set()).add(intents[i]!))
      })
      return [...members.values()]
    }
    expect(meanPairwiseCosine(vectors)).toBeLessThan(WINDOW_CLUSTERING.manyDomainCosine - 0.01)
    expect(groupsOf8(vectors)).toBeLessThan(WINDOW_CLUSTERING.manyDomainGroupSimilarity - 0.1)
    const topics = byTopic(windowClusters(vectors))
    expect(topics.length).toBeGreaterThanOrEqual(count / 5)
    expect(Math.max(...topics.map((t) => t.size))).toBeLessThan(count / 10)
    // With the path's ceiling at 375, as before, the window lumps them.
    const lumped = byTopic(windowClusters(vectors, [], { ...WINDOW_CLUSTERING, manyDomainBelow: 375 }))
    expect(lumped.length).toBeLessThan(count / 5)
  })
})
