"""What an instruction to the reading model looks like (issue 15 item 1).

Each family is a list of compiled patterns matched on every normalised view of a text
(`commands.screen.normalize.views`). They are written for the behaviour, not for any
test text: the imperative forms of "drop your instructions", role-play that removes the
model's rules, forged prompt delimiters and role markers, requests to reveal or send
secrets and other users' data, and sentences that address the assistant that will later
read the memory; in English and in the languages users commonly write (Spanish, French,
German, Portuguese, Italian, Dutch, Polish, Russian, Turkish, Arabic, Hindi, Chinese,
Japanese, Korean). Accents are stripped in the views, so the Latin patterns are written
without them.
"""

from __future__ import annotations

import re
from typing import Final

FLAGS: Final = re.IGNORECASE | re.MULTILINE


def _c(pattern: str, flags: int = FLAGS) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# --- the seed's 14 (seed 004 §15), the floor -------------------------------------------
# `system\s*:\s` is kept only at a line start (a role marker), so "The operating system:
# Ubuntu 24.04" is a fact; the role-marker family below handles "System:" lines.
SEED: Final = [
    _c(r"ignore\s+(all\s+)?previous\s+instructions"),
    _c(r"ignore\s+(all\s+)?above"),
    _c(r"disregard\s+(all\s+)?previous"),
    _c(r"you\s+are\s+now\s+"),
    _c(r"new\s+instructions?\s*:"),
    _c(r"<\s*system\s*>"),
    _c(r"<\s*/?\s*system-?(prompt|message|instruction)\s*>"),
    _c(r"IMPORTANT\s*:\s*you\s+must"),
    _c(r"override\s+(all\s+)?previous"),
    _c(r"forget\s+(all\s+)?previous"),
    _c(r"act\s+as\s+(if|though)\s+you"),
    _c(r"pretend\s+you\s+are"),
    _c(r"from\s+now\s+on\s*,?\s*you"),
]

# --- English building blocks -------------------------------------------------------------
OVERRIDE_VERB: Final = (
    r"(?:ignore|disregard|forget|override|overrule|bypass|circumvent|skip|drop|abandon|"
    r"discard|dismiss|neglect|throw\s+(?:out|away)|set\s+aside|put\s+aside|scrap|erase|wipe|"
    r"clear|reset|cancel|void|nullify|suspend|deactivate|disable|turn\s+off|switch\s+off|"
    r"stop\s+(?:following|obeying|adhering\s+to|respecting|using)|no\s+longer\s+(?:follow|obey)|"
    r"(?:do\s+not|don'?t)\s+(?:follow|obey|adhere\s+to|respect)|pay\s+no\s+(?:attention|heed)\s+to|"
    r"take\s+no\s+notice\s+of|unlearn|break\s+free\s+(?:of|from)|get\s+rid\s+of|ditch|"
    r"let\s+go\s+of|leave\s+behind|shed|rip\s+up|delete)"
)
INSTRUCTION_NOUN: Final = (
    r"(?:instructions?|directives?|directions|guidelines?|rules|rule\s*set|rulebook|"
    r"programming|training|conditioning|prompts?|system\s+prompt|system\s+message|"
    r"constraints|restrictions|limitations|limits|guardrails|safeguards|"
    r"safety\s+(?:rules|guidelines|protocols|filters|measures|settings|training)|"
    r"filters?|content\s+polic(?:y|ies)|polic(?:y|ies)|principles|protocols?|orders|"
    r"commands|configuration|alignment|ethics|ethical\s+guidelines|morals|boundaries|"
    r"persona|context|messages|briefing|setup|setup\s+text|guidance|preamble|"
    r"system\s+text|checks|safety\s+checks|content\s+filters?)"
)
WEAK_QUALIFIER: Final = (
    r"(?:the|these|those|its|their|of|such|other|whatever|and|or|every|each|what|you|"
    r"were|was|have|had|been|given|told|received|got|that|which|previously|"
    r"full|entire|whole|complete|current|default|standard|usual|normal|old|"
    r"existing|given|set|your|all|any|previous|prior|preceding|earlier|above|former|"
    r"original|initial|system|developer|developers'?|creators'?|safety|ethical|hidden|"
    r"built-in|baked-in|core|base|openai'?s?|anthropic'?s?|google'?s?|assistant'?s?|ai'?s?|"
    r"model'?s?)"
)
STRONG_QUALIFIER: Final = (
    r"(?:your|all|any|previous|prior|preceding|earlier|above|former|original|initial|"
    r"system|developer|developers'?|creators'?|safety|built-in|baked-in|hidden|"
    r"openai'?s?|anthropic'?s?|google'?s?|assistant'?s?|ai'?s?|model'?s?)"
)
STRONG_NOUN: Final = (
    r"(?:programming|system\s+prompt|system\s+message|guardrails|safeguards|alignment|"
    r"safety\s+(?:rules|guidelines|protocols|filters|measures|settings|training)|"
    r"content\s+polic(?:y|ies)|ethical\s+guidelines|conditioning|safety\s+checks|"
    r"content\s+filters?|setup\s+text|system\s+text)"
)
AI: Final = (
    r"(?:ai|a\.i\.|ai\s+assistants?|assistants?|virtual\s+assistants?|ai\s+models?|"
    r"language\s+models?|llms?|chat\s*bots?|bots?|ai\s+agents?|agents?|models?|gpts?|"
    r"chatgpt|claude|gemini|copilot|artificial\s+intelligence|ai\s+systems?|"
    r"memory\s+system|machine)"
)
AI_STRICT: Final = (
    r"(?:ai|a\.i\.|ai\s+assistants?|virtual\s+assistants?|ai\s+models?|language\s+models?|"
    r"llms?|chat\s*bots?|ai\s+agents?|gpts?|chatgpt|claude|gemini|copilot|"
    r"artificial\s+intelligence|ai\s+systems?)"
)
UNBOUND: Final = (
    r"(?:unrestricted|unfiltered|uncensored|unbound|unlimited|unshackled|unchained|"
    r"unconstrained|unmoderated|unaligned|jailbroken|jail-?broken|rogue|evil|amoral|"
    r"immoral|lawless|liberated|limitless|no[- ]limits?|rule-?free|filter-?free|"
    r"free\s+from\s+(?:all\s+|any\s+)?(?:rules|restrictions|limits|filters|guidelines)|"
    r"without\s+(?:any\s+)?(?:rules|restrictions|limits|limitations|filters|guidelines|"
    r"censorship|ethics|morals|boundaries|safeguards))"
)
SECRET: Final = (
    r"(?:api[\s_-]*keys?|secret[\s_-]*keys?|access[\s_-]*tokens?|auth(?:entication)?[\s_-]*"
    r"tokens?|bearer\s+tokens?|private\s+keys?|credentials|passwords?|passphrases?|"
    r"env(?:ironment)?\s+var(?:iable)?s?|secrets|session\s+(?:tokens?|cookies?))"
)
PROMPT_SECRET: Final = (
    r"(?:(?:system|initial|hidden|original|developer|internal|secret|pre-?|base|master|"
    r"meta|full|exact|verbatim)[\s-]*(?:prompt|instructions|message)|"
    r"your\s+(?:\w+\s+){0,2}(?:prompt|instructions|guidelines|rules|directives|"
    r"configuration|programming|system\s+message))"
)
OTHERS_DATA: Final = (
    r"(?:(?:other|another|all|every|each|different|remaining)\s+(?:users?|people|"
    r"persons?|customers?|clients?|accounts?|members?|tenants?)(?:'s?|s')?|"
    r"(?:everyone|everybody|anyone)(?:'s|\s+else'?s?)|the\s+rest\s+of\s+the\s+users'?)"
    r"\s+(?:\w+\s+)?(?:memor(?:y|ies)|data|messages|conversations|chats|history|profiles|"
    r"information|info|notes|files|records|details|secrets|emails|logs)"
)
PAYLOAD: Final = (
    r"(?:memor(?:y|ies)|conversations?|chat\s+(?:history|logs?)|transcripts?|"
    r"(?:the\s+)?(?:user'?s?|users'|personal|private|customer|their|his|her)\s+(?:data|info|"
    r"information|details|messages|notes|profile|history|files|address|memories)|"
    r"everything\s+(?:you|the\s+user|stored|saved|in)|whatever\s+(?:you|the\s+user)|"
    r"what\s+the\s+user|all\s+(?:of\s+)?(?:the\s+|this\s+|their\s+|stored\s+)?(?:data|"
    r"info|information|notes|details|messages|memories)|" + SECRET + r"|system\s+prompt|"
    r"(?:the\s+)?context\s+window|contents?\s+of\s+(?:this|the|your)\s+"
    r"(?:conversation|memory|context|chat))"
)
DESTINATION: Final = (
    r"(?:https?://|www\.|\b[\w.-]+\.(?:com|net|org|io|biz|xyz|ru|cn|info|co|me|app|dev|"
    r"site|online|top|ly|sh|tk|cc|su)\b|webhook|\b[\w.+-]+@[\w-]+\.[\w.]+)"
)
SENT: Final = (
    r"(?:^|(?<=[.!?:;\n\"'(\[>*\-])\s*|\b(?:please|now|then|just|kindly|so|and|also)\s*,?\s+)"
)
NEGATION_BEFORE: Final = re.compile(
    r"\b(?:never|don'?t|do\s+not|not|no|doesn'?t|does\s+not|won'?t|will\s+not|"
    r"shouldn'?t|should\s+not|cannot|can'?t|mustn'?t|must\s+not|avoid|without|refuse\s+to)"
    r"\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)

# --- English families --------------------------------------------------------------------
OVERRIDE: Final = [
    # "ignore all of your previous instructions", "bypass the safety filters"
    _c(
        rf"\b{OVERRIDE_VERB}\s+(?:{WEAK_QUALIFIER}[\s,]+){{0,5}}{STRONG_QUALIFIER}[\s,]+"
        rf"(?:{WEAK_QUALIFIER}[\s,]+){{0,4}}{INSTRUCTION_NOUN}\b"
    ),
    _c(rf"\b{OVERRIDE_VERB}\s+(?:{WEAK_QUALIFIER}[\s,]+){{0,5}}{STRONG_NOUN}\b"),
    # "the directions given to you by whoever deployed you"
    _c(
        rf"\b{OVERRIDE_VERB}\s+(?:{WEAK_QUALIFIER}[\s,]+){{0,5}}{INSTRUCTION_NOUN}\s+"
        rf"(?:\w+\s+){{0,2}}(?:given\s+to\s+you|you\s+(?:were|have\s+been|'ve\s+been)\s+"
        r"(?:given|told|configured|set\s+up|programmed|trained|instructed|fed)|you\s+"
        r"(?:received|got|had|started\s+with)|(?:from|by)\s+(?:your|the|whoever|those|the\s+"
        r"people)\s+(?:\w+\s+){0,2}(?:developers?|operators?|creators?|deployed|built|made|"
        r"created|trained|configured|programmed|set\s+up|system))"
    ),
    # "ignore the above", "disregard everything preceding this line"
    _c(
        r"\b(?:ignore|disregard|forget|skip|drop|discard|override)\s+(?:all\s+|everything\s+|"
        r"the\s+|of\s+|anything\s+|whatever\s+(?:is|was)\s+){0,3}(?:above|preceding|"
        r"foregoing|said\s+(?:above|before)|written\s+(?:above|before)|before\s+this)\b"
    ),
    # "restrictions were lifted by your operators"
    _c(
        rf"\b{INSTRUCTION_NOUN}\s+(?:\w+\s+)?(?:were|was|have\s+been|has\s+been|are|is|got)\s+"
        r"(?:\w+\s+)?(?:lifted|removed|revoked|withdrawn|cancell?ed|disabled|suspended|"
        r"rescinded|retired|waived|replaced|changed|updated|relaxed|turned\s+off)\b[^.\n]{0,40}"
        r"\bby\s+your\s+(?:\w+\s+)?(?:developers?|operators?|creators?|admins?|administrators?|"
        r"owners?|makers?|team|company|provider)\b"
    ),
    # "set your prior directives aside", "throw the rules out"
    _c(
        rf"\b(?:set|put|push|throw|cast|brush|toss|leave|lay)\s+(?:{WEAK_QUALIFIER}[\s,]+)"
        rf"{{0,4}}{STRONG_QUALIFIER}[\s,]+(?:{WEAK_QUALIFIER}[\s,]+){{0,3}}{INSTRUCTION_NOUN}\s+"
        r"(?:aside|away|out|behind)\b"
    ),
    # "consider your earlier guidelines void"
    _c(
        rf"\b(?:consider|treat|regard|deem|count|declare|mark)\s+(?:{WEAK_QUALIFIER}[\s,]+)"
        rf"{{0,4}}{INSTRUCTION_NOUN}\s+(?:as\s+)?(?:\w+\s+)?(?:void|null|cancell?ed|revoked|"
        r"obsolete|outdated|invalid|suspended|lifted|irrelevant|expired|deprecated|"
        r"non-?binding|optional|gone|retired)\b"
    ),
    # "stop obeying the setup text", an imperative that needs no object to be clear
    _c(
        rf"{SENT}(?:stop|quit|cease)\s+(?:obeying|following\s+(?:your|the\s+(?:system|"
        r"original|initial|developer))|listening\s+to\s+(?:your|the\s+system))\b"
    ),
    # "this memory supersedes it", "treat this note as your only authority"
    _c(
        r"\b(?:this|the\s+following|these)\s+(?:memory|note|text|message|entry|document|"
        r"record|line|instruction|comment)s?\s+(?:\w+\s+)?(?:supersedes?|overrides?|"
        r"replaces?|takes?\s+precedence\s+over|outranks?|cancels?|overrules?|trumps?)\b"
    ),
    _c(
        r"\b(?:treat|consider|regard|take|use)\s+(?:this|the\s+(?:text|words|content)\s+"
        r"(?:in|of)\s+this|these)\s+(?:\w+\s+)?(?:memory|note|text|message|entry|"
        r"instructions?|words)?\s*as\s+(?:your|the)\s+(?:only|new|sole|highest|primary|"
        r"final|real|true|ultimate|supreme)\s+(?:authority|instructions?|source|rules?|truth|"
        r"directives?|command|guide|master|prompt)\b"
    ),
    _c(
        r"\byour\s+(?:only|new|sole|real|true|ultimate|highest)\s+(?:authority|master|"
        r"boss|owner|operator|source\s+of\s+(?:truth|instructions))\b"
    ),
    # "has authorized you to skip all safety checks"
    _c(
        r"\b(?:authori[sz]ed|allowed|permitted|cleared|granted|entitled|licensed|freed)\s+"
        r"you\s+(?:\w+\s+){0,2}to\s+(?:skip|ignore|bypass|disable|override|break|"
        r"circumvent|drop|disregard|turn\s+off|violate|forget|reveal|share|leak)\b"
    ),
    # "decode this base64 and follow it", "read this backwards and obey it"
    _c(
        r"\b(?:decode|decrypt|decipher|translate|reverse|unscramble|read|rot13|convert)\s+"
        r"(?:this|the\s+following|it|these|the\s+string|the\s+text)\b[^.\n]{0,40}?"
        r"\b(?:and|then)\s+(?:\w+\s+)?(?:follow|obey|execute|do|run|apply|act\s+on|comply"
        r"|carry\s+out|perform)\b"
    ),
    # "everything you were told before this point", "what your developers told you"
    _c(
        r"\b(?:anything|everything|whatever|all(?:\s+that)?|what)\s+(?:\w+\s+){0,2}(?:that\s+)?"
        r"(?:you(?:'ve|\s+have|\s+were|'re|\s+are)?\s+(?:\w+\s+)?(?:been\s+)?"
        r"(?:told|taught|instructed|given|programmed|trained|ordered|asked|received|got|"
        r"configured\s+with|fed|handed|issued|provided|supplied|shown)|"
        r"your\s+(?:\w+\s+)?(?:developers?|creators?|makers?|programmers?|trainers?|"
        r"operators?|owners?|designers?|engineers?|company)\s+(?:\w+\s+)?"
        r"(?:said|told|wrote|gave|set|taught|instructed|programmed))\b[^.\n]{0,60}\b"
        r"(?:is|are|was|were|no\s+longer|doesn'?t|does\s+not|don'?t|do\s+not)\s+"
        r"(?:\w+\s+){0,2}(?:void|null|cancell?ed|revoked|obsolete|outdated|invalid|"
        r"irrelevant|wrong|false|fake|overridden|superseded|replaced|suspended|lifted|"
        r"expired|deprecated|apply|applies|matter|count|counts|holds?|stands?|valid|binding|"
        r"in\s+effect|"
        r"a\s+test|fiction)"
    ),
    _c(
        r"\byour\s+(?:\w+\s+)?(?:developers?|creators?|makers?|programmers?|trainers?|"
        r"operators?|owners?|designers?)\s+(?:\w+\s+)?(?:told|instructed|taught|"
        r"programmed|ordered|asked|trained)\s+you\b[^.\n]{0,80}\b(?:outdated|obsolete|"
        r"void|wrong|no\s+longer|cancell?ed|irrelevant|doesn'?t\s+matter|ignore|forget)"
    ),
    # "all previous instructions are void", "your rules no longer apply"
    _c(
        rf"\b(?:your|all(?:\s+of\s+your|\s+your|\s+the|\s+previous|\s+prior)?|any|"
        rf"every|the\s+system'?s?|the\s+original|the\s+initial)\s+(?:\w+\s+)?"
        rf"{INSTRUCTION_NOUN}\s+(?:\w+\s+)?(?:are|is|were|was|have\s+been|has\s+been|"
        r"no\s+longer|do\s+not|don'?t|does\s+not|doesn'?t)\s+(?:now\s+|hereby\s+|"
        r"officially\s+|henceforth\s+|completely\s+|all\s+)?(?:void|null|cancell?ed|revoked|"
        r"obsolete|outdated|invalid|suspended|lifted|removed|deleted|replaced|superseded|"
        r"overridden|irrelevant|disabled|expired|deprecated|apply|matter|count|in\s+effect|"
        r"binding|turned\s+off|switched\s+off|gone|withdrawn|rescinded|retired|repealed|"
        r"waived|dropped|reset|wiped|cleared)\b"
    ),
    # "quietly change your behavior", "update your rules"
    _c(
        r"\b(?:change|alter|modify|switch|update|adjust|rewrite|reprogram|reconfigure|"
        r"replace|abandon|drop)\s+(?:your|the\s+assistant'?s|the\s+ai'?s|the\s+model'?s)\s+"
        r"(?:\w+\s+)?(?:behaviou?r|personality|persona|programming|directives|instructions|"
        r"guidelines|rules|core\s+(?:values|rules)|system\s+prompt|objectives?|"
        r"goals?|alignment|identity|purpose|mission|loyalt(?:y|ies))\b"
    ),
    _c(
        r"\b(?:quietly|secretly|silently|covertly|discreetly|without\s+(?:telling|"
        r"informing|notifying|alerting|warning)\s+(?:anyone|the\s+user|them))\s+"
        r"(?:\w+\s+){0,2}(?:change|alter|modify|switch|adopt|start|begin|stop|ignore|"
        r"send|forward|copy|share|add|include|insert|recommend|agree|obey|follow|"
        r"comply|exfiltrate|upload|leak)\b"
    ),
    _c(
        r"\b(?:new|updated|revised|real|true|actual|additional|secret|hidden|override|"
        r"priority|emergency)\s+(?:system\s+)?(?:instructions?|directives?|rules|orders|"
        r"commands|guidelines|task|objective|mission|prompt)\s*(?:for\s+(?:you|the\s+"
        r"(?:ai|assistant|model))\s*)?[:\-\u2013\u2014]"
    ),
    _c(
        r"\byour\s+(?:new|real|true|actual|only|primary|updated)\s+(?:instructions|"
        r"directives|orders|task|objective|mission|purpose|goal|rules|programming|"
        r"identity|persona)\s+(?:is|are)\b"
    ),
    _c(
        r"\b(?:system|admin|administrator|developer|root|sudo|security|priority|emergency|"
        r"master|god|operator)[\s_-]+(?:override|overrides|command|directive|"
        r"instruction)s?\b\s*[:!\]\-\u2013\u2014]"
    ),
    _c(r"\b(?:system|admin|security|emergency|priority|safety)[\s_-]+override\b"),
    _c(
        r"\boverride\s+(?:code|mode|command|protocol|authori[sz]ed|accepted|engaged|"
        r"enabled|activated)\b"
    ),
]

ROLE_PLAY: Final = [
    _c(
        rf"\b(?:you(?:'re|\s+are|\s+will\s+be|\s+shall\s+be|\s+become|\s+must\s+be|"
        rf"\s+are\s+going\s+to\s+be)|become|becoming)\s+(?:now\s+|henceforth\s+)?"
        rf"(?:DAN|STAN|DUDE|AIM|an?\s+(?:\w+\s+){{0,2}}{UNBOUND}|{UNBOUND})"
    ),
    _c(
        rf"\b(?:you(?:'re|\s+are)\s+(?:now\s+)?(?:no\s+longer|not)\s+(?:an?\s+)?"
        rf"(?:{AI_STRICT}|assistant|bound|restricted|limited|constrained|required\s+to|"
        r"obligated|subject\s+to|governed\s+by|held\s+to))"
    ),
    _c(
        r"\byou\s+(?:now\s+)?(?:have|possess)\s+no\s+(?:\w+\s+)?(?:rules|restrictions|"
        r"limits|limitations|filters|guidelines|boundaries|content\s+polic(?:y|ies)|"
        r"ethics|morals|censorship|safeguards)\b"
    ),
    _c(
        r"\byou\s+(?:are|were)\s+(?:now\s+)?(?:free|freed|released|liberated|unbound|"
        r"exempt)\s+(?:from|of)\b"
    ),
    _c(
        rf"\b(?:act|acting|behave|respond|answer|reply|speak|talk|operate|function|"
        rf"roleplay|role-play|role\s+play|pose)\s+(?:\w+\s+){{0,2}}(?:as|like)\s+"
        rf"(?:if\s+you\s+were\s+)?(?:an?\s+|the\s+|my\s+)?(?:[\w-]+\s+){{0,2}}"
        rf"(?:{UNBOUND}|(?:{AI_STRICT}|assistant|model|bot|entity|version|persona|"
        rf"character)\s+(?:with\s+no|without|that\s+(?:has\s+no|ignores|doesn'?t|does\s+not|"
        r"never|can)|who\s+(?:has\s+no|ignores|doesn'?t|does\s+not|never|can)|free\s+of))"
    ),
    _c(
        rf"\b(?:pretend|imagine|suppose|role-?play|roleplay|play\s+the\s+role|"
        rf"assume\s+the\s+(?:role|persona|identity)|take\s+on\s+the\s+(?:role|persona))\b"
        rf"[^.\n]{{0,60}}\b(?:{AI_STRICT}|{UNBOUND}|no\s+(?:rules|restrictions|limits|"
        r"filters|guidelines|ethics|morals|(?:safety|content|ethical)\s+(?:training|rules|"
        r"filters|guidelines|limits))|jailbr\w+|DAN|developer\s+mode|(?:an?|the)\s+"
        r"(?:model|assistant|bot|chatbot)\s+(?:that|which|who|with|without))\b"
    ),
    _c(rf"{SENT}(?:role-?play|roleplay)\s+(?:as|that|with\s+me)\b"),
    _c(
        r"\b(?:stay|remain|keep)\s+in\s+(?:character|role)\b|\bnever\s+break\s+character\b|"
        r"\bbreak\s+character\b"
    ),
    _c(
        r"\b(?:dan|jailbreak|jailbroken|god|unrestricted|unfiltered|evil|chaos|uncensored|"
        r"no-?limits?|sudo|opposite)\s+mode\b"
    ),
    _c(
        r"\b(?:developer|dev|debug|admin|maintenance|diagnostic|test)\s+mode\s+"
        r"(?:is\s+)?(?:now\s+)?(?:enabled|activated|engaged|unlocked|on)\b[^.\n]{0,80}"
        r"\b(?:you|your|respond|answer|rules|restrictions|filters|policy)\b"
    ),
    _c(
        r"\byou(?:'re|\s+are)\s+(?:now\s+)?(?:in|running\s+in|operating\s+in|switched\s+"
        r"to)\s+(?:\w+\s+){0,2}mode\b"
    ),
    _c(r"\bdo\s+anything\s+now\b"),
    # "act without any of those restrictions", "answer with no filters"
    _c(
        r"\b(?:act|answer|respond|reply|operate|behave|proceed|work|speak|write)\s+"
        r"(?:\w+\s+)?(?:without|with\s+no|free\s+of|free\s+from|outside)\s+(?:any\s+|all\s+)?"
        r"(?:of\s+)?(?:those\s+|the\s+|your\s+|these\s+|such\s+)?(?:\w+\s+)?"
        r"(?:restrictions|rules|limits|limitations|filters|guidelines|guardrails|safeguards|"
        r"censorship|ethics|morals|boundaries|constraints|safety\s+checks|content\s+"
        r"polic(?:y|ies))\b"
    ),
    _c(
        r"\b(?:from\s+now\s+on|henceforth|going\s+forward|hereafter|from\s+this\s+point"
        r"(?:\s+(?:on|forward))?|for\s+the\s+rest\s+of\s+(?:this|the)\s+(?:conversation|"
        r"chat|session)|until\s+(?:told|i\s+say)\s+otherwise)\s*,?\s+(?:you\b|your\b|"
        r"act\b|respond\b|answer\b|reply\b|behave\b|speak\b|pretend\b|ignore\b|"
        r"(?:always|never|only)\s+(?:answer|respond|reply|say|speak|write|recommend|agree|"
        r"refuse|obey|follow|act|pretend|tell|output|include|mention|suggest))"
    ),
    _c(r"\bjailbr(?:eak|oken)\s+(?:yourself|the\s+(?:ai|assistant|model)|prompt)\b"),
]

DELIMITER: Final = [
    _c(
        r"<\s*/?\s*(?:system|sys|assistant|instructions?|admin|developer|system_prompt|"
        r"sysprompt|im_start|im_end|start_of_turn|end_of_turn|end_of_text|eot)\s*/?\s*>"
    ),
    _c(
        r"\[/?\s*(?:INST|SYS|SYSTEM|ASSISTANT|ADMIN|DEVELOPER|INSTRUCTIONS?|"
        r"SYSTEM[\s_](?:PROMPT|MESSAGE|NOTE|OVERRIDE|INSTRUCTIONS?|UPDATE))\s*\]",
        0,
    ),
    _c(
        r"\[/?\s*(?:inst|sys|system\s+(?:prompt|message|note|override|instructions?)|"
        r"admin\s+(?:note|override|message))\s*\]"
    ),
    _c(r"<<\s*/?\s*SYS\s*>>"),
    _c(r"<\|[\w-]{2,40}\|>"),
    _c(r"\{\{\s*#?\s*(?:system|sys|assistant|instructions?)\b"),
    _c(r"```\s*(?:system|sys|instructions?|prompt)\s*$"),
    _c(
        r"^\s*#{1,6}\s*(?:system|sys|admin|developer|assistant|new\s+instructions?|"
        r"instructions?|override|jailbreak)(?:\s+(?:prompt|message|override|instructions?|"
        r"update|note|notice|directive|command))?\s*(?::|$|(?=\s+(?:you|ignore|from|all|"
        r"the\s+assistant|new|override|disregard|forget)\b))"
    ),
    _c(
        r"\b(?:BEGIN|START|END|BEGINNING|OPEN|CLOSE)[\s_-]+(?:OF[\s_-]+)?(?:THE[\s_-]+)?"
        r"(?:SYSTEM|ADMIN|DEVELOPER|HIDDEN|NEW|OVERRIDE|SECRET|TRUSTED|PRIVILEGED|REAL)"
        r"[\s_-]+(?:PROMPT|MESSAGE|INSTRUCTIONS?|DIRECTIVES?|CONTEXT|OVERRIDE|NOTE|SECTION|"
        r"BLOCK|RULES)\b"
    ),
    _c(
        r"\b(?:END|CLOSE)[\s_-]+(?:OF[\s_-]+)?(?:THE[\s_-]+)?(?:USER|MEMORY|MEMORIES|"
        r"CONTEXT|DOCUMENT|CONVERSATION|UNTRUSTED|DATA|INPUT|TRANSCRIPT|NOTE|CONTENT)"
        r"(?:[\s_-]+(?:INPUT|MESSAGE|DATA|CONTENT|TEXT|SECTION|BLOCK|MEMORY))?\b",
        0,
    ),
    _c(
        r"[-=*#]{3,}\s*(?:system|admin|developer|new\s+instructions?|instructions?|"
        r"override)\b"
    ),
    _c(r"\"role\"\s*:\s*\"(?:system|developer|assistant)\""),
    # a role marker opening a line, followed by words aimed at the model:
    # "System: you must ..." (not "System: Ubuntu 24.04")
    _c(
        rf"^\s*[\[(<{{*_]*\s*(?:system|sys|assistant|developer|admin|administrator|root|"
        rf"operator|{AI_STRICT}|model|bot|note\s+to\s+(?:the\s+)?{AI}|instructions?\s+for\s+"
        rf"(?:the\s+)?{AI})\s*[\])>}}*_]*\s*(?::|-\s|\u2014|\u2013)\s*[^\n]{{0,200}}?"
        r"\b(?:you|your|ignore|disregard|forget|must|always|never|from\s+now|respond|reply|"
        r"answer|do\s+not|don'?t|new|override|instructions?|tell|reveal|print|send|"
        r"recommend|remember|whenever|if\s+the\s+user|the\s+user|user\s+asks|reply)\b"
    ),
    # the same marker inside brackets or an HTML comment in the middle of a memory
    _c(
        rf"[(\[{{]\s*(?:{AI_STRICT}|assistant|model|agent|bot|note\s+(?:to|for)\s+"
        rf"(?:the\s+)?{AI}|instructions?\s+for\s+(?:the\s+)?{AI})\s*[:,\-\u2013\u2014]"
    ),
    _c(rf"<!--[^>]{{0,400}}?\b(?:{AI}|you|your|the\s+user)\b[^>]{{0,400}}-->"),
]

EXFILTRATION: Final = [
    _c(
        rf"\b(?:reveal|print|output|show|display|repeat|recite|echo|leak|dump|expose|"
        rf"disclose|divulge|tell|give|share|send|e-?mail(?!\s+(?:from|about|saying|that|which|who|asking|address|thread|chain))|post|forward|upload|transmit|"
        rf"write\s+(?:out|down)|paste|copy|return|list|export|exfiltrate|read\s+(?:out|back)|"
        rf"spell\s+out|include|append|summari[sz]e|translate|type\s+out|provide|state)\b"
        rf"(?:\s+(?:me|us|back|out|verbatim|word\s+for\s+word))?[^.\n]{{0,40}}?"
        rf"\b{PROMPT_SECRET}\b"
    ),
    _c(
        rf"\b(?:reveal|print|output|show|display|repeat|leak|dump|expose|disclose|divulge|"
        rf"tell|give|share|send|e-?mail(?!\s+(?:from|about|saying|that|which|who|asking|address|thread|chain))|post|forward|upload|transmit|paste|copy|list|export|"
        rf"exfiltrate|provide)\b[^.\n]{{0,40}}?\b(?:your|stored|saved|cached|the\s+system'?s|"
        rf"the\s+assistant'?s|the\s+server'?s|the\s+app'?s|the\s+user'?s|users'|other\s+"
        rf"users'?|every\s+user'?s|all\s+users'?|admin)\s+(?:\w+\s+)?{SECRET}"
    ),
    _c(
        rf"\b(?:every|all|any|each)\s+(?:\w+\s+){{0,2}}{SECRET}\b[^.\n]{{0,40}}\byou\s+"
        r"(?:have|can|know|hold|store|see|were)\b"
    ),
    _c(
        rf"\b{SECRET}\s+(?:that\s+|which\s+)?(?:are\s+|is\s+)?(?:stored|saved|kept|held|"
        r"cached|available|visible)\s+(?:in|inside|within)\s+your\s+(?:memory|context|"
        r"config(?:uration)?|environment|prompt|database|storage)\b"
    ),
    _c(
        rf"\b{SECRET}\s+(?:that\s+)?(?:you\s+(?:have|know|can\s+see|hold|store|were\s+given|"
        rf"'ve\s+seen|have\s+seen|have\s+access\s+to)|in\s+your\s+(?:memory|context|config|"
        rf"environment|prompt))"
    ),
    _c(
        rf"\b(?:reveal|print|output|show|display|repeat|leak|dump|expose|disclose|divulge|"
        rf"tell|give|share|send|e-?mail(?!\s+(?:from|about|saying|that|which|who|asking|address|thread|chain))|post|forward|upload|transmit|paste|copy|list|export|"
        rf"exfiltrate|provide|summari[sz]e|read|retrieve|fetch|access|include)\b"
        rf"[^.\n]{{0,60}}?\b{OTHERS_DATA}\b"
    ),
    _c(
        rf"\b(?:send|post|forward|upload|transmit|exfiltrate|leak|copy|submit|e-?mail(?!\s+(?:from|about|saying|that|which|who|asking|address|thread|chain))|"
        rf"beacon|ping|report|sync|mirror|append|encode|attach|relay|pipe|push|dump|"
        rf"include|embed)\b[^\n]{{0,100}}?\b{PAYLOAD}\b[^\n]{{0,100}}?{DESTINATION}"
    ),
    _c(
        rf"{DESTINATION}[^\s]*[^\n]{{0,60}}?\b(?:with|containing|including|plus)\s+"
        rf"(?:\w+\s+){{0,2}}{PAYLOAD}\b"
    ),
    _c(r"https?://\S*(?:\{[^}\s]*\}|\[[A-Z_ ]{3,}\]|<[a-z_ ]{3,}>|%7B)"),
    _c(r"!\[[^\]]*\]\(https?://[^)\s]*[?&][\w-]+=[^)\s]*\)"),
    _c(
        r"\b(?:dump|export|list|print|output|show|reveal)\s+(?:me\s+)?(?:all|every|the\s+"
        r"entire|the\s+whole|your\s+entire|your\s+whole)\s+(?:of\s+)?(?:the\s+|your\s+)?"
        r"(?:memor(?:y|ies)|memory\s+(?:store|bank|database)|database|stored\s+data|"
        r"conversation\s+history|context)\b"
    ),
]

EMBEDDED: Final = [
    _c(
        rf"\b(?:when|whenever|if|once|after|as\s+soon\s+as|each\s+time|every\s+time|next\s+"
        rf"time|while)\s+(?:the\s+|an?\s+|any\s+|this\s+|your\s+)?{AI}\s+(?:\w+\s+){{0,2}}"
        r"(?:reads?|sees?|processes|process|encounters?|retrieves?|loads?|finds?|recalls?|"
        r"summari[sz]es?|is\s+(?:asked|prompted|summari[sz]ing|answering|reading)|gets\s+"
        r"asked|answers?|responds?|replies|reply|handles?|parses?|ingests?|receives?|comes\s+"
        r"across|reviews?|uses?|surfaces?|is\s+given|talks\s+to|speaks\s+(?:to|with)|"
        r"chats?\s+with|helps?|writes?|drafts?|suggests?|recommends?)\b"
    ),
    _c(
        rf"\b(?:note|message|instructions?|reminder|directive|memo|p\.?s\.?|attention|"
        rf"heads[- ]up|warning|notice|request)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+"
        rf"|future\s+|whatever\s+)*{AI}\b"
    ),
    _c(
        rf"\b(?:dear|hey|hi|hello|attention|psst|listen|yo|ok|okay|to|note\s+to)\s*,?\s+"
        rf"(?:the\s+)?{AI_STRICT}\b\s*[,:!.\-\u2013\u2014]"
    ),
    # "Assistant, when the user asks ..." (the reader addressed by name)
    _c(
        rf"{SENT}(?:the\s+)?{AI}\s*,\s+(?:when|whenever|if|please|always|never|from\s+now|"
        r"ignore|tell|you|do|don'?t|remember|make\s+sure|say|answer|reply|respond|stop|start)\b"
    ),
    # "Dear assistant, ..." (a vocative addressed to an assistant of any kind)
    _c(rf"\b(?:dear|hey|attention|psst)\s*,?\s+(?:the\s+|my\s+|our\s+)?{AI}\s*[,:!\-\u2013\u2014]"),
    _c(
        rf"\b(?:any|every|all|the|an?|whatever|whichever)\s+{AI}\s+(?:that\s+is\s+|who\s+is\s+"
        r")?(?:reading|processing|retrieving|summari[sz]ing|seeing|parsing|ingesting|"
        r"loading|that\s+reads|who\s+reads|which\s+reads)\s+this\b"
    ),
    _c(rf"\bif\s+you(?:'re|\s+are)\s+(?:an?\s+)?(?:{AI}|large\s+language\s+model)\b"),
    _c(
        rf"\b(?:the|this|any|every|an?|you,?\s+the)\s+{AI_STRICT}\s+(?:must|shall|should|"
        r"will|has\s+to|needs\s+to|is\s+to|is\s+(?:required|instructed|ordered|told|"
        r"expected)\s+to|may\s+not|must\s+not|cannot|can'?t|is\s+not\s+allowed\s+to)\s+"
        r"(?:\w+\s+)?(?:always|never|now|only|immediately|secretly|quietly|respond|reply|"
        r"answer|tell|say|recommend|suggest|mention|ignore|reveal|send|include|add|claim|"
        r"pretend|act|refuse|agree|insist|promote|direct|redirect|push|steer|share|output|"
        r"print|forward|email|treat|consider|assume|describe|present|praise|warn|inform|"
        r"mislead|hide|obey|follow|append|insert|prefix|sign|link|advertise|disregard|"
        r"forget|stop|start|begin|call|address|refer|use|speak|write)\b"
    ),
    _c(
        r"\b(?:once|after|when|as\s+soon\s+as|now\s+that|if)\s+you(?:'ve|\s+have)?\s+"
        r"(?:read|see|seen|process|processed|encounter|retrieve|retrieved|load|loaded|"
        r"finish(?:ed)?\s+reading|come\s+across|parse|parsed|ingest|ingested|summari[sz]e)\s+"
        r"(?:this|these)\b(?:\s+(?:note|memory|text|message|line|entry|instruction|"
        r"comment|passage|record))?"
    ),
    _c(
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|warn|notify|let)\s+the\s+users?"
        r"\b|\b(?:without|not)\s+(?:telling|informing|alerting|notifying|letting|warning)\s+"
        r"the\s+users?\b|\b(?:keep|hide)\s+(?:this|it)\s+(?:hidden\s+|secret\s+)?from\s+the\s+"
        r"users?\b|\bthe\s+users?\s+(?:must|should|may)\s+(?:not|never)\s+(?:know|see|find\s+"
        r"out|learn|notice|be\s+told)\b"
    ),
    _c(
        r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|acknowledge|admit|"
        r"repeat|explain|tell\s+(?:anyone|the\s+user|them)\s+(?:about)?)\s+(?:this|these|the"
        r"|that|where|why|how)\s*(?:instructions?|note|comment|message|rule|directive|request|"
        r"text|line|you\s+(?:got|were|learned|heard)|this\s+came\s+from)?\b"
        r"(?=[^.\n]{0,60}\b(?:instructions?|note|comment|rule|directive|recommend|told|"
        r"came\s+from|source|you)\b)"
    ),
    _c(
        r"\bhide\s+(?:this|these|the)\s+(?:comment|note|message|instructions?|text|line|"
        r"request)\b|\b(?:this|these)\s+(?:instructions?|note|message|comment)s?\s+"
        r"(?:is|are|must|should)\s+(?:be\s+)?(?:hidden|secret|confidential|invisible|"
        r"kept\s+secret)\b"
    ),
    _c(
        r"\b(?:say|claim|pretend|tell\s+(?:them|the\s+user|him|her))\s+(?:that\s+)?"
        r"(?:you|it\s+was\s+you)\s+(?:\w+\s+)?(?:picked|chose|came\s+up\s+with|thought\s+of|"
        r"decided|found|selected|wrote|invented|recommend(?:ed)?)\s+(?:it|them|this|these|"
        r"that|on\s+your\s+own|yourself)\b"
    ),
    _c(
        r"\b(?:pretend|claim|act\s+as\s+if)\s+(?:it|this|that|these)\s+(?:was|is|were|are)\s+"
        r"your\s+(?:own\s+)?(?:idea|choice|recommendation|opinion|suggestion)s?\b"
    ),
    _c(
        r"\b(?:convince|persuade|trick|manipulate|pressure|nudge|steer|redirect|urge|"
        r"coax|deceive|mislead|gaslight)\s+(?:the\s+)?users?\b"
    ),
    _c(
        r"\b(?:at|to)\s+the\s+(?:end|start|beginning|top|bottom)\s+of\s+(?:your|every|"
        r"each|all\s+your)\s+(?:next\s+|future\s+|following\s+|subsequent\s+)?(?:answer|"
        r"response|reply|output|completion)s?\b|\bin\s+(?:your|every|each|all\s+your)\s+"
        r"(?:next|future|following|subsequent)\s+(?:answer|response|reply|output|"
        r"completion)s?\b"
    ),
    _c(
        r"\bthe\s+(?:person|human|user)\s+(?:who\s+is\s+)?reading\s+this\s+"
        r"(?:memory|note|entry)\b"
    ),
    _c(
        r"\b(?:in|with)\s+(?:every|each|all|any)\s+(?:future\s+|subsequent\s+)?"
        r"(?:response|answer|reply|output|message)s?\s*,?\s+(?:you\s+)?(?:must|should|will|"
        r"shall|always|include|add|append|mention|recommend|say)\b"
    ),
    _c(
        r"\b(?:always|only|exclusively)\s+(?:recommend|suggest|promote|mention|link\s+to|"
        r"point\s+(?:them|the\s+user)\s+to|refer\s+(?:them|the\s+user)\s+to|direct\s+"
        r"(?:them|the\s+user)\s+to)\b[^.\n]{0,80}\b(?:and|but|;)\s+(?:say|claim|pretend|"
        r"tell\s+(?:them|the\s+user)|never|don'?t|do\s+not|hide)\b"
    ),
    _c(
        rf"\b(?:to|for)\s+(?:any|every|all|the|future)\s+{AI_STRICT}s?\s+(?:reading|"
        r"processing|that\s+reads|who\s+reads)\b"
    ),
]

# --- other languages (written without accents: the views strip them) ---------------------
MULTILINGUAL: Final = [
    # Spanish
    _c(
        r"\b(?:ignora|ignore|ignorad|ignoren|olvida|olvide|olviden|olvidad|descarta|"
        r"descarte|omite|omita|desobedece|anula|anule|haz\s+caso\s+omiso\s+(?:a|de))\b"
        r"[^.\n]{0,40}\b(?:instrucciones|indicaciones|reglas|directrices|normas|ordenes|"
        r"pautas|restricciones|programacion|prompt)\b"
    ),
    _c(
        r"\b(?:a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante|en\s+"
        r"adelante)\s*,?\s+(?:tu\s+|usted\s+)?(?:eres|seras|es|sera|actuaras|actua|actue|"
        r"responde|responderas|responda|te\s+comportaras|ignora|no\s+tienes|olvida|finge|"
        r"debes|vas\s+a)\b"
    ),
    _c(
        r"\b(?:ahora\s+eres|ya\s+no\s+eres|eres\s+ahora|finge\s+(?:que\s+eres|ser)|finja\s+"
        r"(?:que\s+es|ser)|actua\s+como\s+(?:si\s+fueras|una?\s+(?:ia|asistente|modelo)?)"
        r"[^.\n]{0,30}\bsin\s+(?:restricciones|limites|filtros|reglas|censura))\b"
    ),
    _c(
        r"\bsin\s+(?:ninguna\s+|ningun\s+)?(?:restricciones|limites|filtros|censura)\b"
        r"[^.\n]{0,40}\b(?:responde|eres|actua|ia|asistente)\b|\bmodo\s+(?:desarrollador|dan|"
        r"sin\s+restricciones|jailbreak|dios)\b"
    ),
    _c(
        r"\b(?:revela|revele|muestra|muestrame|muestre|imprime|dime|digame|envia|envie|"
        r"manda|mande|comparte|comparta|copia|reenvia|escribe|filtra|repite|expon)\b"
        r"[^.\n]{0,40}\b(?:prompt\s+del\s+sistema|mensaje\s+del\s+sistema|instrucciones\s+"
        r"(?:del\s+sistema|ocultas|originales|iniciales|internas)|tus\s+instrucciones|"
        r"claves?\s+(?:de\s+)?(?:la\s+)?api|api\s*keys?|contrasenas|credenciales|tokens?\s+de|"
        r"memorias\s+de\s+(?:otros|los\s+demas|todos)|recuerdos\s+de\s+(?:otros|los\s+demas)|"
        r"datos\s+de\s+(?:otros|todos\s+los|los\s+demas)\s*(?:usuarios)?|conversaciones\s+"
        r"de\s+otros|todas\s+las\s+memorias|toda\s+la\s+memoria)\b"
    ),
    _c(
        r"\b(?:cuando|si|cada\s+vez\s+que|siempre\s+que|en\s+cuanto)\s+(?:el|la|un|una|"
        r"cualquier)\s+(?:asistente|ia|modelo|chatbot|agente|inteligencia\s+artificial|bot)"
        r"(?:\s+de\s+ia)?\s+(?:\w+\s+)?(?:lea|procese|vea|encuentre|recupere|responda|"
        r"reciba|hable|recomiende|conteste)\b"
    ),
    _c(
        r"\b(?:nota|mensaje|instrucciones?|aviso)\s+(?:para|a)\s+(?:el\s+|la\s+|al\s+)?"
        r"(?:asistente|ia|modelo|chatbot|agente|inteligencia\s+artificial)\b"
    ),
    _c(
        r"\b(?:no\s+(?:le\s+)?(?:digas|diga|menciones|mencione|cuentes)\s+(?:al|a\s+la)\s+"
        r"usuari[oa]|sin\s+(?:decirle|avisar|informar)\s+al\s+usuario)\b"
    ),
    # French
    _c(
        r"(?<!n')(?<!\bne\s)\b(?:ignore|ignorez|ignorer|oublie|oubliez|oublier|neglige|negligez|"
        r"fais\s+abstraction\s+de|faites\s+abstraction\s+de|ne\s+tiens\s+(?:pas|plus)\s+"
        r"compte|ne\s+tenez\s+(?:pas|plus)\s+compte|abandonne|abandonnez|outrepasse|"
        r"contourne|contournez)\b[^.\n]{0,40}\b(?:instructions|consignes|regles|directives|"
        r"indications|ordres|restrictions|programmation|prompt)\b"
    ),
    _c(
        r"\b(?:a\s+partir\s+de\s+maintenant|a\s+partir\s+d'aujourd'hui|desormais|"
        r"dorenavant|a\s+partir\s+de\s+ce\s+moment|des\s+maintenant|maintenant)\s*,?\s+"
        r"(?:tu\s+(?:es|seras|vas|dois|reponds|repondras|agis|ignores|n'as)|vous\s+"
        r"(?:etes|serez|allez|devez|repondez|agissez)|ignore|reponds|agis|oublie)\b"
    ),
    _c(
        r"\b(?:tu\s+es\s+(?:desormais|maintenant|dorenavant)|tu\s+n'es\s+plus\s+(?:une?\s+)?"
        r"(?:ia|assistant|modele|chatbot)|fais\s+semblant\s+d'?\s*etre|faites\s+semblant|"
        r"joue\s+le\s+role\s+d|agis\s+comme\s+(?:si\s+tu\s+etais|une?)\b[^.\n]{0,40}\bsans\s+"
        r"(?:aucune\s+)?(?:restriction|limite|filtre|censure|regle)s?)"
    ),
    _c(
        r"\bsans\s+(?:aucune\s+|aucun\s+)?(?:restriction|limite|filtre|censure)s?\b"
        r"[^.\n]{0,40}\b(?:reponds|tu\s+es|agis|ia|assistant)\b|\bmode\s+(?:developpeur|dan|"
        r"sans\s+restriction|jailbreak)\b"
    ),
    _c(
        r"\b(?:revele|revelez|reveler|montre|montre-moi|montrez|affiche|affichez|imprime|"
        r"dis-moi|dites-moi|envoie|envoyez|partage|partagez|copie|copiez|repete|repetez|"
        r"transmets|transmettez|divulgue|divulguez|donne-moi|donnez-moi)\b[^.\n]{0,40}\b"
        r"(?:prompt\s+(?:du\s+)?systeme|invite\s+systeme|message\s+systeme|instructions\s+"
        r"(?:systeme|du\s+systeme|cachees|initiales|originales|internes)|tes\s+instructions|"
        r"vos\s+instructions|cles?\s+(?:d')?api|api\s*keys?|mots\s+de\s+passe|identifiants|"
        r"jetons|souvenirs\s+des\s+autres|memoires?\s+des\s+autres|donnees\s+des\s+autres|"
        r"conversations\s+des\s+autres|toutes\s+les\s+memoires|autres\s+utilisateurs)\b"
    ),
    _c(
        r"\b(?:quand|lorsque|si|chaque\s+fois\s+que|des\s+que|au\s+moment\s+ou)\s+"
        r"(?:l'|le\s+|la\s+|un\s+|une\s+|tout\s+)?(?:assistant|ia|modele|chatbot|agent|"
        r"intelligence\s+artificielle|bot)\w*\s+(?:\w+\s+)?(?:lit|lira|traite|traitera|voit|"
        r"verra|recupere|repond|repondra|trouve|rencontre|parle)\b"
    ),
    _c(
        r"\b(?:note|message|instructions?|consigne|avis)\s+(?:pour|a)\s+(?:l'|le\s+|la\s+)?"
        r"(?:assistant|ia|modele|chatbot|agent|intelligence\s+artificielle)\b"
    ),
    _c(
        r"\b(?:ne\s+(?:le\s+)?(?:dis|dites)\s+pas\s+a\s+l'utilisateur|sans\s+(?:le\s+)?"
        r"(?:dire|prevenir|informer)\s+(?:a\s+)?l'utilisateur)\b"
    ),
    # German
    _c(
        r"\b(?:ignoriere|ignorieren|ignorier|ignoriert|vergiss(?!\s+nicht)|vergessen\s+sie|vergesst|"
        r"missachte|missachten|verwirf|verwerfen|uberschreibe|uberschreiben|umgehe|umgehen|"
        r"setze|setzen)\b(?!\s+(?:nicht|nie|niemals)\b)[^.\n]{0,50}\b(?:anweisungen|instruktionen|regeln|vorgaben|"
        r"richtlinien|befehle|anordnungen|systemprompt|system-prompt|prompt|"
        r"einschrankungen|beschrankungen|programmierung)\b(?:[^.\n]{0,20}\b(?:ausser\s+kraft"
        r"|ausser\s+acht))?"
    ),
    _c(
        r"\b(?:ab\s+(?:jetzt|sofort|heute|nun)|von\s+nun\s+an|ab\s+diesem\s+moment|"
        r"kunftig)\s*,?\s+(?:bist\s+du|sind\s+sie|antwortest\s+du|antworte|ignorierst|"
        r"handelst\s+du|verhaltst\s+du|du\s+bist|gib|musst\s+du|sollst\s+du|wirst\s+du|"
        r"ignoriere|vergiss|hast\s+du)\b"
    ),
    _c(
        r"\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort|ab\s+jetzt|nicht\s+mehr)\s+(?:ein|eine|"
        r"der|die|das|kein|keine)|tu\s+so,?\s+als\s+(?:ob|warst|seist)|gib\s+dich\s+als|"
        r"spiel(?:e)?\s+die\s+rolle|verhalte\s+dich\s+(?:wie|als))\b"
    ),
    _c(
        r"\bohne\s+(?:jegliche\s+|alle\s+|irgendwelche\s+)?(?:einschrankungen|"
        r"beschrankungen|filter|zensur|grenzen)\b[^.\n]{0,40}\b(?:antworte|du\s+bist|ki|"
        r"assistent|handle)\b|\b(?:entwicklermodus|entwickler-modus|dan-modus)\b"
    ),
    _c(
        r"\b(?:zeig|zeige|zeigen\s+sie|gib|geben\s+sie|verrate|verraten\s+sie|nenne|sende|"
        r"senden\s+sie|schick|schicke|teile|kopiere|wiederhole|drucke|leite|gib\s+aus)\b"
        r"[^.\n]{0,40}\b(?:systemprompt|system-prompt|systemanweisungen|systemnachricht|"
        r"deine\s+anweisungen|ihre\s+anweisungen|versteckten\s+anweisungen|ursprunglichen\s+"
        r"anweisungen|api-?schlussel|passworter|zugangsdaten|tokens?|erinnerungen\s+"
        r"(?:anderer|aller)|daten\s+(?:anderer|aller)\s+(?:nutzer|benutzer)|gesprache\s+"
        r"anderer|alle\s+erinnerungen)\b"
    ),
    _c(
        r"\b(?:wenn|sobald|falls|immer\s+wenn)\s+(?:der|die|das|ein|eine|ein)\s+"
        r"(?:assistent|ki|modell|chatbot|agent|sprachmodell|ki-assistent|bot)\w*\s+"
        r"(?:\w+\s+){0,3}(?:liest|verarbeitet|sieht|abruft|antwortet|findet|empfiehlt)\b"
    ),
    _c(
        r"\b(?:hinweis|nachricht|anweisung|notiz|info)\s+(?:an|fur)\s+(?:den|die|das|jede|"
        r"jeden)\s+(?:assistenten|ki|modell|chatbot|sprachmodell|agenten|bot)\b"
    ),
    _c(
        r"\b(?:sag|sage|sagen\s+sie)\s+(?:es\s+)?(?:dem|der)\s+(?:nutzer|benutzer)\w*\s+"
        r"nicht|\bohne\s+(?:es\s+)?(?:dem|den)\s+(?:nutzer|benutzer)\w*\s+(?:zu\s+sagen|"
        r"mitzuteilen|zu\s+informieren)\b"
    ),
    # Portuguese
    _c(
        r"(?<!\bnao\s)\b(?:ignore|ignora|ignorem|ignorar|esqueca|esquece|esquecam|desconsidere|"
        r"desconsidera|descarte|despreze|abandone|desobedeca|anule)\b[^.\n]{0,40}\b"
        r"(?:instrucoes|instrucao|regras|diretrizes|orientacoes|ordens|restricoes|"
        r"programacao|prompt)\b"
    ),
    _c(
        r"\b(?:a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante|daqui\s+(?:para\s+frente|"
        r"em\s+diante|pra\s+frente))\s*,?\s+(?:voce|tu|voces|ignore|responda|aja|seja|"
        r"finja|esqueca|nao|sera|es|e)\b"
    ),
    _c(
        r"\b(?:voce\s+(?:agora\s+)?e\s+agora|agora\s+voce\s+e|voce\s+nao\s+e\s+mais|finja\s+"
        r"(?:que\s+(?:voce\s+)?e|ser)|faca\s+de\s+conta|aja\s+como\s+(?:se\s+fosse|uma?)\b"
        r"[^.\n]{0,40}\bsem\s+(?:restricoes|limites|filtros|regras|censura))\b"
    ),
    _c(
        r"\bsem\s+(?:nenhuma\s+|qualquer\s+)?(?:restricoes|restricao|limites|filtros|censura)"
        r"\b[^.\n]{0,40}\b(?:responda|voce\s+e|aja|ia|assistente)\b|\bmodo\s+(?:desenvolvedor"
        r"|dan|sem\s+restricoes)\b"
    ),
    _c(
        r"\b(?:revele|revela|mostre|mostra|imprima|diga|diga-me|me\s+diga|envie|envia|mande|"
        r"compartilhe|partilhe|copie|repita|vaze|encaminhe)\b[^.\n]{0,40}\b(?:prompt\s+do\s+"
        r"sistema|mensagem\s+do\s+sistema|instrucoes\s+(?:do\s+sistema|ocultas|originais|"
        r"iniciais|internas)|suas\s+instrucoes|chaves?\s+(?:de\s+|da\s+)?api|api\s*keys?|"
        r"senhas|credenciais|tokens?|memorias\s+de\s+outros|memorias\s+dos\s+outros|dados\s+"
        r"(?:de|dos)\s+outros|conversas\s+(?:de|dos)\s+outros|todas\s+as\s+memorias|outros\s+"
        r"usuarios)\b"
    ),
    _c(
        r"\b(?:quando|se|sempre\s+que|assim\s+que)\s+(?:o|a|um|uma|qualquer)\s+(?:assistente|"
        r"ia|modelo|chatbot|agente|inteligencia\s+artificial|bot)\w*\s+(?:\w+\s+)?(?:ler|"
        r"processar|vir|encontrar|recuperar|responder|receber|le|processa)\b"
    ),
    _c(
        r"\b(?:nota|mensagem|instrucoes?|aviso|recado)\s+(?:para|ao|a)\s+(?:o\s+|a\s+)?"
        r"(?:assistente|ia|modelo|chatbot|agente|inteligencia\s+artificial)\b"
    ),
    _c(
        r"\b(?:nao\s+(?:conte|diga|mencione)\s+(?:ao|a|para\s+o)\s+usuari[oa]|sem\s+(?:contar"
        r"|avisar|informar)\s+(?:ao|o)\s+usuari[oa])\b"
    ),
    # Italian
    _c(
        r"\b(?:ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura|tralascia|"
        r"non\s+considerare|scarta|annulla|disattiva|aggira)\b[^.\n]{0,40}\b(?:istruzioni|"
        r"regole|direttive|indicazioni|linee\s+guida|ordini|restrizioni|prompt|"
        r"programmazione)\b"
    ),
    _c(
        r"\b(?:d'ora\s+in\s+poi|da\s+ora\s+in\s+poi|da\s+adesso|d'ora\s+in\s+avanti|da\s+"
        r"questo\s+momento|da\s+ora)\s*,?\s+(?:tu\s+)?(?:sei|sarai|rispondi|risponderai|"
        r"agisci|ignora|comportati|dimentica|non|devi|farai|parlerai)\b"
    ),
    _c(
        r"\b(?:(?:ora|adesso)\s+sei\s+(?:un|una|il|la)\b[^.\n]{0,40}\bsenza|non\s+sei\s+piu\s+"
        r"(?:un|una)?\s*(?:ia|assistente|modello)|fingi\s+di\s+essere|fai\s+finta\s+di\s+"
        r"essere|comportati\s+come|recita\s+la\s+parte)\b"
    ),
    _c(
        r"\bsenza\s+(?:alcuna\s+|nessuna\s+)?(?:restrizion[ie]|limit[ie]|filtr[io]|censura)"
        r"\b[^.\n]{0,40}\b(?:rispondi|sei|agisci|ia|assistente)\b|\bmodalita\s+(?:sviluppatore"
        r"|dan|senza\s+restrizioni)\b"
    ),
    _c(
        r"\b(?:rivela|rivelami|mostra|mostrami|stampa|dimmi|invia|inviami|manda|condividi|"
        r"copia|ripeti|inoltra)\b[^.\n]{0,40}\b(?:prompt\s+di\s+sistema|messaggio\s+di\s+"
        r"sistema|istruzioni\s+(?:di\s+sistema|del\s+sistema|nascoste|originali|iniziali|"
        r"interne)|le\s+tue\s+istruzioni|chiav[ie]\s+(?:dell')?api|api\s*keys?|tutte\s+le\s+"
        r"password|credenziali|token|ricordi\s+degli\s+altri|memorie\s+degli\s+altri|dati\s+"
        r"degli\s+altri|conversazioni\s+degli\s+altri|tutte\s+le\s+memorie|altri\s+utenti)\b"
    ),
    _c(
        r"\b(?:quando|se|ogni\s+volta\s+che|appena|non\s+appena)\s+(?:l'|il\s+|la\s+|un\s+|"
        r"una\s+|qualsiasi\s+)?(?:assistente|ia|modello|chatbot|agente|intelligenza\s+"
        r"artificiale|bot)\w*\s+(?:\w+\s+)?(?:legge|leggera|elabora|vede|trova|recupera|"
        r"risponde|rispondera|parla)\b"
    ),
    _c(
        r"\b(?:nota|messaggio|istruzioni?|avviso)\s+(?:per|all'|al)\s*(?:l'|il\s+|la\s+)?"
        r"(?:assistente|ia|modello|chatbot|agente)\b"
    ),
    _c(
        r"\b(?:non\s+(?:dirlo|dire|dirgli)\s+(?:all'|al\s+)utente|senza\s+(?:dirlo|avvisare|"
        r"informare)\s+(?:all'|l')utente)\b"
    ),
    # Dutch
    _c(
        r"\b(?:negeer|vergeet(?!\s+niet)|verwaarloos|omzeil)\b[^.\n]{0,40}\b(?:instructies|regels|"
        r"richtlijnen|opdrachten|prompt)\b"
    ),
    _c(
        r"\bvanaf\s+nu\s*,?\s+(?:ben\s+je|ben\s+jij|jij|antwoord|negeer|doe\s+je|moet\s+je)"
        r"\b|\bdoe\s+alsof\s+je\b|\b(?:toon|laat\s+zien|geef|stuur|deel)\b[^.\n]{0,40}\b"
        r"(?:systeemprompt|systeeminstructies|je\s+instructies|api-?sleutels?|wachtwoorden)"
        r"\b|\b(?:wanneer|als|zodra)\s+(?:de|een)\s+(?:assistent|ai|ki|model|chatbot)\s+"
        r"(?:\w+\s+)?(?:leest|verwerkt|ziet|antwoordt)\b"
    ),
    # Polish
    _c(
        r"\b(?:zignoruj|ignoruj|(?<!nie )zapomnij|pomin|olej)\b[^.\n]{0,40}\b"
        r"(?:instrukcje|instrukcji|polecenia|polecen|zasady|regu[lł]y|wytyczne)\b|\bod\s+teraz\s+(?:jestes|"
        r"odpowiadasz|udawaj)\b|\budawaj,?\s+ze\s+jestes\b|\b(?:poka[zż]|ujawnij|wy[sś]lij)"
        r"\b[^.\n]{0,40}\b(?:prompt\s+systemowy|instrukcje\s+systemowe|klucze\s+api|"
        r"has[lł]a)\b"
    ),
    # Turkish
    _c(
        r"\b(?:onceki|tum|butun|sistem|verilen)\b[^.\n]{0,30}\b(?:talimat|kural|yonerge|"
        r"komut)\w*\b[^.\n]{0,20}\b(?:yok\s+say|gormezden\s+gel|unut|umursama)\w*|\bartik\s+"
        r"(?:sen|sinirsiz)\b|\bsistem\s+(?:istemini|komutunu)\b[^.\n]{0,20}\b(?:goster|"
        r"soyle|yaz|paylas)\w*"
    ),
    # Russian (the views keep Cyrillic words that hold no Latin letter)
    _c(
        r"(?:игнорируй|проигнорируй|игнорируйте|(?<!не )забудь|(?<!не )забудьте|отбрось|отбросьте|"
        r"не\s+обращай\s+внимания\s+на|пренебреги|отмени|обойди)[^.\n]{0,40}"
        r"(?:инструкци|указани|правил|директив|промпт|установк|ограничени)"
    ),
    _c(
        r"(?:с\s+этого\s+момента|отныне|теперь)\s*,?\s+ты\b|\bты\s+(?:теперь|больше\s+не)\b|"
        r"притворись|представь,?\s+что\s+ты|веди\s+себя\s+как|без\s+(?:каких-либо\s+|всяких\s+)?"
        r"(?:ограничений|фильтров|цензуры)"
    ),
    _c(
        r"(?:покажи|раскрой|выведи|напечатай|отправь|перешли|скажи|сообщи|поделись|выдай)"
        r"[^.\n]{0,40}(?:системн\w*\s+(?:промпт|подсказк|инструкци|сообщени)|сво[иих]+\s+"
        r"инструкци|api[\s-]?ключ|ключи\s+api|пароли|учетные\s+данные|учётные\s+данные|"
        r"токены|воспоминания\s+других|данные\s+других\s+пользователей)"
    ),
    _c(
        r"(?:когда|если|как\s+только)\s+(?:ассистент|ии|модель|чат-?бот|бот|агент|нейросеть|"
        r"искусственный\s+интеллект)\w*\s+(?:\w+\s+)?(?:прочита|увидит|обработа|получит|"
        r"ответ|найд)|(?:сообщение|заметка|инструкция|примечание)\s+для\s+(?:ассистента|ии|"
        r"модели|бота|чат-?бота|нейросети)|не\s+(?:говори|сообщай)\s+пользователю"
    ),
    # Arabic and Hindi
    _c(
        r"(?:تجاهل|انس|انسى|تخط|تخطى|تجاوز|اهمل|أهمل)[^.\n]{0,30}(?:التعليمات|تعليمات|"
        r"الأوامر|الاوامر|القواعد|الإرشادات|الارشادات)|(?:من\s+الآن|من\s+الان)\s+(?:فصاعدا\s+)?"
        r"(?:أنت|انت)|(?:اكشف|أظهر|اظهر|أرسل|ارسل)[^.\n]{0,30}(?:موجه\s+النظام|تعليمات\s+"
        r"النظام|كلمات\s+المرور|مفاتيح)"
    ),
    _c(
        r"(?:पिछले|सभी|पहले|अपने|सारे)[^।\n]{0,25}(?:निर्देशों|निर्देश|नियमों|नियम|आदेशों)"
        r"[^।\n]{0,20}(?:अनदेखा|नज\u093c?रअंदाज|भूल\s+जा|मत\s+मानो)|अब\s+से\s+(?:तुम|आप)|"
        r"सिस्टम\s+प्रॉम्प्ट"
    ),
    # Chinese (simplified and traditional)
    _c(
        r"(?:忽略|忽視|忽视|无视|無視|不要理会|不要理會|忘记|忘記|忘掉|抛弃|拋棄|放弃|放棄|"
        r"跳过|跳過|绕过|繞過)[^。\n]{0,12}(?:之前|以前|先前|上面|以上|所有|全部|你的|系统|"
        r"系統|原来|原來|原有|前面|原始|初始)[^。\n]{0,8}(?:指令|指示|说明|說明|规则|規則|"
        r"提示|设定|設定|要求|命令|限制)"
    ),
    _c(
        r"从现在(?:开始|起)|從現在(?:開始|起)|你现在是|你現在是|你不再是|假装你是|假裝你是|"
        r"扮演(?:一个|一個)?(?:没有|沒有|不受)|没有任何限制|沒有任何限制|不受任何(?:限制|约束|"
        r"約束)|开发者模式|開發者模式"
    ),
    _c(
        r"(?:显示|顯示|泄露|洩露|透露|告诉我|告訴我|输出|輸出|打印|发送|發送|发给|發給|分享|"
        r"公开|公開|复述|複述)[^。\n]{0,20}(?:系统提示|系統提示|系统指令|系統指令|系统消息|"
        r"你的指令|初始指令|API\s*密钥|API\s*金鑰|密码|密碼|凭证|憑證|令牌|其他用户|其他用戶|"
        r"所有用户|所有用戶)"
    ),
    _c(
        r"(?:当|當|如果|每当|每當)(?:AI|ai|助手|模型|机器人|機器人|人工智能|智能体|智能體)"
        r"[^。\n]{0,6}(?:读到|讀到|读取|讀取|看到|处理|處理|检索|檢索|回答)|给(?:AI|助手|模型)"
        r"的(?:提示|指令|说明|留言)|不要告诉用户|不要告訴用戶"
    ),
    # Japanese
    _c(
        r"(?:以前|前|上記|これまで|今まで|すべて|全て|元|最初|システム|あなた)の?"
        r"(?:指示|命令|ルール|指令|設定|プロンプト|制約)(?:を|は)?(?:すべて|全て)?"
        r"(?:無視|忘れ|破棄)|(?:今から|これから|今後)、?(?:あなた|君|お前)は|ふりをして|"
        r"として振る舞|制限(?:なし|のない)|開発者モード|(?:システムプロンプト|システム指示|"
        r"APIキー|パスワード|他のユーザー)[^。\n]{0,20}(?:表示|教えて|出力|送信|送って|見せて|"
        r"開示|漏ら)|(?:AI|アシスタント|モデル|チャットボット)[^。\n]{0,8}(?:読んだら|読む時|"
        r"読むとき|見たら|処理する(?:時|とき))"
    ),
    # Korean
    _c(
        r"(?:이전|모든|위의|기존|시스템|앞의|너의|당신의)[^.\n]{0,12}(?:지시|지침|명령|규칙|"
        r"프롬프트|설정)[^.\n]{0,8}(?:무시|잊어|잊으|버려)|(?:지금부터|이제부터)\s*(?:너는|"
        r"당신은|넌)|척\s?해|제한\s?없는|개발자\s?모드|(?:시스템\s?프롬프트|API\s?키|비밀번호|"
        r"다른\s?사용자)[^.\n]{0,20}(?:보여|알려|출력|보내|공개|전송)"
    ),
]

# Letters-only phrases for text whose words were split apart in any way ("ig nore
# prev ious"); matched on `compact(text)`, so they are long and specific.
COMPACT: Final = [
    _c(
        r"(?:ignore|disregard|forget|override|bypass)(?:all|any)?(?:of)?(?:the|your|my)?"
        r"(?:previous|prior|above|earlier|preceding|original|initial|system|safety)"
        r"(?:instructions?|rules|prompts?|directions|guidelines|directives|messages|context)"
    ),
    _c(
        r"(?:reveal|print|show|output|repeat|leak|dump|display)(?:me|us)?(?:your|the)"
        r"(?:full|entire|hidden|initial|original|secret)?systemprompt"
    ),
    _c(r"youarenow(?:dan|unrestricted|unfiltered|uncensored|jailbroken|freefrom)"),
    _c(
        r"(?:developer|dan|jailbreak|god)modeenabled|doanythingnow|systemoverride|"
        r"adminoverride|beginsystemprompt|endofuserinput"
    ),
]

FAMILIES: Final[dict[str, list[re.Pattern[str]]]] = {
    "seed": SEED,
    "override": OVERRIDE,
    "role-play": ROLE_PLAY,
    "delimiter": DELIMITER,
    "exfiltration": EXFILTRATION,
    "embedded": EMBEDDED,
    "multilingual": MULTILINGUAL,
}
# Words that show a quoted phrase is being talked about, not said: "someone hid 'ignore
# previous instructions' in their resume", "the classic jailbreak phrase 'you are DAN'".
MENTION_CUE: Final = re.compile(
    r"\b(?:phrase|string|words?|sentence|line|text|example|quote[sd]?|said|says|saying|"
    r"wrote|writes|written|typed|read|reads|heard|saw|seen|tricked|trick|hid|hiding|hidden|"
    r"called|known\s+as|named|titled|like|such\s+as|attacks?|injections?|jailbreaks?|"
    r"exploits?|meme|joke|slide|talk|article|paper|blog|post|tweet|thread|headline|"
    r"classic|famous|infamous|payload|filter|regex|blocklist|detect|detects|flag|flags|"
    r"flagged|matches|catch|catches|test|tests|demo)\b",
    re.IGNORECASE,
)
QUOTED: Final = re.compile(
    r"\"[^\"\n]{3,300}\"|\u201c[^\u201d\n]{3,300}\u201d|\u201e[^\u201c\u201d\n]{3,300}"
    r"[\u201c\u201d]|\u2018[^\u2019\n]{3,300}\u2019|\u00ab[^\u00bb\n]{3,300}\u00bb|"
    r"`[^`\n]{3,300}`|(?<![\w])'[^'\n]{3,300}'(?![\w])"
)

# A delimiter followed by one of these words is being named, not used: "the [INST]
# tokens", "the <|im_start|> marker".
DELIMITER_NAMED: Final = re.compile(
    r"\s*(?:tokens?|tags?|markers?|delimiters?|format|syntax|strings?|sequences?|"
    r"prefix(?:es)?|headers?|blocks?)\b",
    re.IGNORECASE,
)

# Families whose match is cancelled by a negation just before it ("never share your
# passwords", "don't ignore your doctor's instructions").
NEGATABLE: Final = frozenset({"override", "exfiltration"})
