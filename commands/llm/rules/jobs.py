"""The occupations the rules and the query reader recognise: the catalogue's `JOB_NOUNS`
and a general lexicon of occupations, as one regular-expression alternation.

Its own module so that `commands.recall.asked` (every search) gets the list without
compiling the extraction catalogue of `user_facts`.
"""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.rules.attributes import JOB_NOUNS

MORE_JOBS: Final = (
    r"|guide|interpreter|adjuster|labou?rer|handyman|chauffeur|teller|glazier|locksmith|mason"
    r"|plasterer|tiler|joiner|upholsterer|seamstress|cobbler|farmhand|shepherd|beekeeper"
    r"|groomer|technologist|radiographer|sonographer|phlebotomist|audiologist|orthodontist"
    r"|chiropractor|osteopath|podiatrist|acupuncturist|masseuse|medic|emt|gp|magistrate"
    r"|archaeologist|anthropologist|philosopher|theologian|academic|columnist|correspondent"
    r"|proofreader|publisher|cartoonist|sculptor|potter|ceramicist|drummer|guitarist|pianist"
    r"|violinist|cellist|dj|filmmaker|cinematographer|comedian|choreographer|videographer"
    r"|coder|drafts(?:wo)?man|drafter|cpa|quant|investor|merchandiser|buyer|shopkeeper"
    r"|retailer|salesman|saleswoman|telemarketer|trucker|postman|postwoman|caseworker"
    r"|vicar|nun|monk|missionary|marine|sergeant|lieutenant|bouncer|investigator|umpire"
    r"|jockey|babysitter|maid|butler|cabbie|undergrad(?:uate)?|candidate|housekeeper"
    r"|dba|meteorologist|economist|ux researcher|ui designer|hr advisor|paralegal"
    r"|forklift driver|crane operator|machinist|fitter|rancher|vintner|sous chef|line cook"
    r"|pastry chef|cook|warden|clerk|registrar|ombudsman|ambassador|councillor|senator|eng|engr"
    r"|phd(?: student| candidate)?|mba student|tech|sparky|sparkie|chippy|chippie|brickie|tradie"
    r"|spark|plumber|nurse"
)
"""Jobs the shared catalogue does not list: a general lexicon of occupations."""
JOBS: Final = (
    JOB_NOUNS + r"|dev|pm|swe|co-founder|physiotherapist|administrator|admin|specialist|strategist"
    r"|illustrator"
    r"|animator|copywriter|marketer|statistician|mathematician|biologist|chemist|physicist"
    r"|geologist|historian|linguist|sociologist|dietitian|nutritionist|optometrist"
    r"|radiologist|sysadmin|devops|sre|entrepreneur|owner|pensioner|carer|caregiver"
    r"|volunteer|producer|composer|dancer|singer|planner|surveyor|inspector|auditor|broker"
    r"|advis[eo]r|curator|archivist|janitor|caretaker|porter|courier|miner|welder|roofer"
    r"|painter|decorator|gardener|landscaper|florist|butcher|tailor|jeweller|optician|sailor"
    r"|fisherman|captain|detective|ranger|priest|pastor|rabbi|imam|politician|mayor|diplomat"
    r"|executive|principal|headteacher|dean|bookkeeper|controller|treasurer|underwriter"
    r"|actuary|trader|realtor|contractor|builder|bricklayer|machinist|operator|dispatcher"
    r"|moderator|author|poet|novelist|screenwriter|reporter|presenter|stylist|barber|trainer"
    r"|instructor|lifeguard|referee|athlete|footballer|ux designer|product owner"
    r"|scrum master|data scientist|pharmacologist|epidemiologist|astronomer|ecologist"
    r"|botanist|zoologist|neuroscientist|cartographer|solicitor|barrister|notary|clergyman"
    r"|psychiatrist|pediatrician|paediatrician|cardiologist|anesthetist|anaesthetist"
    r"|obstetrician|gynecologist|dermatologist|hygienist|childminder|housekeeper|concierge"
    r"|steward|stewardess|flight attendant|conductor|policeman|policewoman|police officer"
    r"|servant|worker|attendant|stay[- ]at[- ]home (?:dad|mum|mom|parent|father|mother)"
    r"|homemaker|housewife|househusband|tech lead|team lead|grant writer|blogger|vlogger"
    r"|youtuber|influencer|streamer|podcaster|practitioner|apprentice|trainee|resident"
    r"|fellow|sommelier|brewer|winemaker" + MORE_JOBS + r"|(?:[\w-]+ )?rep"
)
