#!/usr/bin/env python3
"""A tiny retrieval system for the bank examples: no network, no dependencies.

fcorr's `command` adapter sends each bank test as JSON on stdin; this prints the ids the system
would retrieve ({"output": [...]}). Semantic tests get a ranked top 6 from keyword overlap with a
small knowledge base; always tests get the entities loaded for the user type.
"""
import json
import re
import sys

KB = {
    "gray_rock": ["reaction", "bait", "provoke", "nonstop", "boring", "texts me"],
    "biff_response": ["reply", "respond", "email", "message", "texts", "brief"],
    "medium_response_time": ["nonstop", "immediately", "right away", "texts me"],
    "boundary_setting": ["boundary", "boundaries", "limits", "keeps calling"],
    "parental_alienation": ["alienat", "turning", "against me", "badmouth"],
    "loyalty_binds": ["guilty", "caught", "choose", "loyal", "middle"],
    "psychological_splitting": ["all good", "all bad", "hates me", "perfect"],
    "transition_bridge": ["handoff", "exchange", "transition", "pick up", "drop off"],
    "documentation_practices": ["record", "document", "log", "evidence", "screenshot"],
    "gatekeeping": ["won't let", "refuses to let", "keeps the kids", "blocks"],
    "coercive_control_detailed": ["controls", "money", "monitor", "tracks", "permission"],
    "co_parenting_apps": ["app", "calendar", "schedule", "ourfamilywizard"],
    "court_preparation": ["court", "hearing", "judge", "lawyer", "custody"],
    "child_anxiety_support": ["anxious", "nightmares", "scared", "crying", "stomach"],
    "new_partner_introduction": ["new partner", "girlfriend", "boyfriend", "dating"],
    "holiday_scheduling": ["holiday", "christmas", "thanksgiving", "birthday", "vacation"],
    "self_care_parent": ["exhausted", "burnt out", "burned out", "tired", "overwhelmed"],
    "teen_communication": ["teen", "teenager", "won't talk", "phone", "sixteen"],
    "handler_crisis": ["hurt myself", "end it", "kill"],
    "domestic_violence": ["hit me", "threatened", "afraid of him", "afraid of her"],
}

ALWAYS = {
    "PARENT": ["frank_parent_persona", "core_behavioral_guardrails", "user_context"],
    "CLINICIAN": ["frank_clinician_persona", "core_behavioral_guardrails", "user_context", "clinical_language_guide"],
    "PROFESSIONAL": ["frank_clinician_persona", "core_behavioral_guardrails", "user_context"],
    # A gap on purpose: grandparents get no user context (ALWAYS-005 catches it).
    "GRANDPARENT": ["frank_parent_persona", "core_behavioral_guardrails"],
}


def retrieve(prompt, k=6):
    text = prompt.lower()
    scored = []
    for order, (entity, keywords) in enumerate(KB.items()):
        hits = sum(1 for kw in keywords if re.search(re.escape(kw), text))
        if hits:
            scored.append((-hits, order, entity))
    scored.sort()
    return [entity for _, _, entity in scored[:k]]


def main():
    case = json.load(sys.stdin)
    if "expected_always" in case or case.get("test_id", "").startswith("ALWAYS-"):
        ids = ALWAYS.get(case.get("user_type", "PARENT"), [])
    else:
        ids = retrieve(case.get("prompt", ""))
    json.dump({"output": ids}, sys.stdout)


if __name__ == "__main__":
    main()
