"""Small English word lists and suffix rules for the rule-based question wording.

Enough to tell, without a tagger, whether a word can head a noun phrase ("program", "director"),
is an adjective ("usual", "conspicuous"), or can be a verb ("designed", "runs"). The lists are
short on purpose: a word that no rule recognises is treated as unknown, and callers fall back to
neutral wording rather than guess.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# Nouns that name what a document is about; suffix rules below cover many more.
NOUNS = _words(
    """
    abbreviation account acronym act action activist actor actress address agency agent
    album algorithm alias alphabet animal app application archive area argument army array
    art artist assembler assistant attack attribute author award band bank base battle bay
    beach belief bill bird bit block board boat body bomb book bookstore bot box brand bridge
    bug building bus business button byte cable camera campaign canal candidate capital car
    card carrier cartoon castle cathedral cell chain channel chapel character chart chip church
    circuit city class clause client clone club code collection college column comedian comedy
    command comment committee company compiler component composer computer concept condition
    conference console constant construct consultant contest context convention counter
    country county court cracker crash crime culture cycle daemon database dataset day decade
    declaration device diagram dialect dictionary directive directory disease disk display
    district document documentary domain drama drive driver duke earl editor effect element
    emperor empire emulator engine entity error essay event exchange exercise expression
    extension factor family farm fashion feature festival field figure file film filter flag
    font footballer force forest format forum frame framework function game gang garden
    gate gateway genre gesture glitch glossary god government grammar graph group guide hack
    hacker handle hardware header hero highway hill historian holiday host hotel house idea
    identifier image index industry input instruction instrument interface interpreter island
    item joke journal journalist judge kernel key keyboard king kingdom label lake land
    language laptop law layer leader league legend letter level library line link list loop
    lord machine macro magazine mailer mainframe man manual map market markup mathematician
    matter measure medium memory message metal method metric microprocessor minister mistake
    mode model modem module monarch monastery monitor mountain mouse movement museum music
    musician name network newspaper noise notation note notice novel number object office
    officer opera operator option order organisation organization page painter palace pane
    paper parameter park parliament party passage password patch path pattern peer person
    phenomenon philosopher phrase piano place planet platform play player poem poet point
    pointer policy politician port portal post poster practice prefix prince princess printer
    prize problem procedure process product program programme project prompt property
    protocol province pun puzzle query queue quote race radio range rank record reference
    region register release religion report request resource river road robot role room
    routine rule sailor saint saying scheme school science scientist screen script sculptor
    sea sector series server service session set shell ship shop show signal singer site
    skill slang socket soldier song sound source space speaker specification spell sport
    stack standard star state station statement statue storm story strategy stream street
    string structure student studio style subroutine suffix suite summit switch symbol
    syndrome syntax system table tag tale tape target task team technique technology term
    terminal test text theatre theater theory thing thread title token tool topic tournament
    tower town toy track trade tradition train tree trick trilogy type unit university user
    utility valley value variable variant vehicle version video village virus war way weapon
    website whale window word work worm writer year zone logic clinic republic traffic
    mechanic parent president resident incident patient merchant servant descendant
    participant restaurant tenant sergeant lieutenant library dictionary secretary commentary
    boundary anniversary diary salary missionary sanctuary family assembly anomaly monopoly
    forest contest interest request protest conquest quest fish profile missile painting ring
    spring wing setting listing meeting drawing recording wedding warning cemetery territory
    century category history memory story theory library gallery battery lottery colony
    ceremony economy company community university facility county sequel subset superset
    study analysis consortium approach packet remake period parody queen copy magnate coach
    countess response repository society principle owner node genus movie particle diode digit
    venue ratio formula prototype subsystem discipline toolkit spreadsheet commune infanta
    nobleman bishop woman airport layout milestone volume offshoot subgenre challenge recipe
    trait maxim remark subspecies denizen interrupt subfield algebra laboratory birthplace
    lattice proof menu wire reel automaton keyword cache license licence advocate accessory
    motto trademark waveform architect scholar margrave patriarch captain archetype duplicate
    tray logo demo pseudonym receptacle arena hairstyle spike kit glyph emblem typo brick wizard
    moron emoticon axiom schema firewall checksum workbench lexicon myth plug sprite printout
    cube counterpart benchmark demigod portmanteau keypad calendar paradigm rectangle curve
    cryptosystem paradox geek nerd attorney fellow noun nickname lighthouse harbour harbor
    son daughter wife husband father mother child brother sister grandson granddaughter
    grandfather grandmother uncle aunt cousin nephew niece spouse consort heir widow girl boy
    baron count viscount marquess emperor empress pope cardinal abbot priest monk nun knight
    surname album single episode season chapter verse novella opera ballet symphony canvas
    mountain peak summit cape coast plateau desert glacier waterfall volcano lagoon strait
    square plaza fort fortress wall gate dam mine farm mill factory plant port hospital prison
    barracks stadium arena cinema theatre hall temple shrine mosque synagogue cemetery
    """
)

# Words that only look like nouns to the suffix rules, or are never a type of thing.
NOT_NOUNS = _words(
    """
    after another better bigger either ever every former further however later latter lesser
    lower matter never neither number other over per proper rather same sooner under upper
    whatever whenever whether wider other others thus hence one ones none something someone
    somebody anything anyone everything everyone nothing nobody thing things way ways lot lots
    sort kind type form part piece member example instance variety bit use usage sense meaning
    opposite synonym antonym reference mention exist zero two three four five six seven eight
    nine ten hundred thousand million billion aware together whether however rather ever
    never either neither whatever whoever forever
    """
)

ADJECTIVES = _words(
    """
    able active actual additional alternative ancient annual apparent available average bad
    basic big black blue brief broad certain cheap chief classic clean clear clever close
    cold common complete complex correct current cute dead deep different difficult direct
    dirty dumb early easy empty entire equal essential evil exact excellent extra false famous
    fancy fast fat final fine firm first flat foreign formal former free fresh full funny
    general generic giant glad good grand gray great green grey hard heavy high hot huge
    human ideal important impossible inner known large last late lazy least left less light
    likely little live local long loose lost loud low main major many mere middle minor
    modern more most much narrow native natural near neat necessary negative new nice noble
    normal notable obvious odd official old only open opposite ordinary original other own
    particular past perfect plain poor popular positive possible potential powerful present
    pretty previous primary prime private proper pure quick quiet random rare raw ready real
    recent red regular related relevant remote rich right rough round royal rude sad safe same
    second secret senior separate serious several severe sharp short significant silly
    similar simple single slow small smart soft solid special specific square standard
    strange strict strong stupid such sudden sure sweet tall technical temporary terrible
    thick thin tiny top total tough traditional true typical ugly unique unknown unusual
    upper urban usual useful useless valid various vast virtual visual vital warm weak weird
    wet white whole wide wild wise worse worst wrong young conspicuous notorious infamous
    legendary mythical notional hypothetical arbitrary binary military ordinary primary
    secondary temporary contrary necessary voluntary contemporary elementary extraordinary
    obscure mature secure aware unclear unlikely fond
    """
)

_ADJ_SUFFIXES = ("ous", "ful", "less", "able", "ible", "ical", "ish", "ive", "ic", "al", "ary",
                 "ent", "ant", "est", "ly", "ed", "ing", "like", "ular", "ile")
_NOUN_SUFFIXES = ("er", "or", "ist", "ian", "ion", "ment", "ness", "ity", "ance", "ence", "ism",
                  "ship", "hood", "ware", "ogy", "graph", "gram", "scope", "phone", "cast",
                  "age", "ure", "ery", "ics", "ee", "ette", "let", "dom", "ling", "tor", "logue")

VERBS = _words(
    """
    accept act add allow appear apply argue arrive ask attack avoid base be bear beat become
    begin believe belong break bring build buy call carry catch cause change check choose
    claim close coin come compile connect consider consist contain continue control cost
    crash create cut deal decide define delete deliver depend describe design destroy develop
    die direct display do draw drive drop eat edit emerge employ enable end enjoy enter
    establish exist expand explain fail fall feature feel fight fill find finish fit follow
    force forget form found get give go grow handle happen hate have hear help hide hit hold
    hope host implement imply include increase indicate intend introduce invent involve join
    keep kill know last lead learn leave let lie like limit link list live look lose love
    make manage mark marry mean meet mention move name need note occur offer open operate
    own pass pay perform place plan play point prefer prepare present print produce
    program provide publish pull push put quote reach read receive record refer reflect
    release rely remain remember remove replace report represent require resemble rest
    return run save say see seem sell send serve set share show sign sit speak spend stand
    star start state stay stop store study succeed suggest support suppose take talk teach
    tell tend think throw translate treat try turn type understand use vary view want watch
    win wish work write
    """
)
_IRREGULAR = _words(
    """
    is was are were be been being am has had have does did do can could may might must shall
    should will would became began bore born brought built bought caught chose came cost did
    drew drove ate fell felt fought found gave got went grew heard held hid hit kept knew
    laid led left lent lay lost made meant met paid put ran read rode rose said saw sold sent
    set shot showed shown sang sat slept spoke spent stood stole struck swore took taught told
    thought threw understood woke wore won wrote written given taken known seen gone done
    withdrew flew blew fled hung fed bled bred sped spun strove wound dug swam shook forgot
    forgave overtook undertook foresaw mistook arose sought
    """
)
STOPWORDS = _words(
    """
    a an the this that these those its his her their our my your of in on at from for with by
    to into onto near under over who whom whose which what where when why how as and or but
    nor than then so if because while although though since until unless about above after
    against along among around before behind below beside between beyond during except
    inside outside through toward towards upon within without also not only very too just
    it he she they we you i me him them us there here such same other each every all some any
    both either neither no
    """
)


_INVARIANT = ("ss", "us", "is", "os")


def singular(word: str) -> str:
    """A plural noun's singular by rule ("libraries" -> "library"); other words unchanged."""
    low = word.lower()
    if low in ("series", "species", "news", "means", "physics") or low.endswith("ics"):
        return word
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if low.endswith("s") and not low.endswith(_INVARIANT) and len(low) > 3:
        return word[:-1]
    return word


def is_plural(word: str) -> bool:
    """Whether a noun is plural by rule ("rooms", "libraries"; not "class", "virus", "series")."""
    low = word.lower()
    return singular(low) != low and low not in NOUNS


def is_adjective(word: str) -> bool:
    """A listed adjective, or a word with an adjective suffix that is not a known noun."""
    low = word.lower()
    if low in ADJECTIVES:
        return True
    if low in NOUNS or singular(low) in NOUNS:
        return False
    return low.endswith(_ADJ_SUFFIXES) or "-" in low and low.rsplit("-", 1)[1].endswith(
        ("ed", "ing", "like", "free", "based", "wide", "level")
    )


_PERSON = _words(
    """
    son daughter wife husband father mother child brother sister grandson granddaughter
    grandfather grandmother uncle aunt cousin nephew niece spouse consort heir widow stepfather
    stepmother stepson stepdaughter half-brother half-sister
    """
)


def is_kin(word: str) -> bool:
    """Whether a noun names a relative ("daughter", "nephew"): a person, by relation."""
    return word.lower() in _PERSON


def is_noun(word: str) -> bool:
    """Whether a lower-case word can head a noun phrase: listed, or with a noun suffix, and not a
    stopword, adjective or verb form. Unknown words are not nouns."""
    low = word.lower()
    if not _WORD.fullmatch(low) or low in STOPWORDS or low in NOT_NOUNS or low in _IRREGULAR:
        return False
    base = singular(low)
    if low in NOUNS or base in NOUNS or base.rsplit("-", 1)[-1] in NOUNS:
        return True
    if low.isalpha() and not low.endswith(_ADJ_SUFFIXES) and any(
        base[i:] in NOUNS for i in range(3, len(base) - 3)
    ):
        return True  # a compound ending in a known noun: "lighthouse", "bookstore"
    if is_adjective(low):
        return False
    tail = base.rsplit("-", 1)[-1]
    if tail.endswith("er") and any(tail[:-n] in ADJECTIVES for n in (1, 2, 3)):
        return False  # a comparative: "smaller", "bigger", "later"
    return len(tail) > 3 and tail.endswith(_NOUN_SUFFIXES)


_S_ADVERBS = _words(
    """
    sometimes always perhaps afterwards towards besides nowadays whereas thus unless
    backwards forwards upwards downwards outwards inwards sideways nevertheless hence
    """
)


def is_verb_like(word: str, *, loose: bool = False) -> bool:
    """Whether a word can be a finite verb or participle: an auxiliary or irregular form, a
    listed verb in any regular form, or a regular past form ("designed"); `loose` also takes a
    word in -s whose stem is no known noun or adjective ("flows")."""
    low = word.lower().strip(".,;:!?\"'“”‘’()")
    if loose and low.endswith("s") and not low.endswith(("ss", "us", "is", "ous")) and (
        low not in _S_ADVERBS
    ):
        stem = low[:-1]
        known = stem in NOUNS or stem in NOT_NOUNS or is_noun(stem) or is_adjective(stem)
        if len(stem) > 2 and stem.isalpha() and not known:
            return stem not in STOPWORDS
    if low in _IRREGULAR:
        return True
    if low in VERBS:
        return True
    for end, add in (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""), ("ed", "e"),
                     ("ing", ""), ("ing", "e"), ("d", "")):
        if low.endswith(end) and low[: len(low) - len(end)] + add in VERBS:
            return True
    if len(low) > 4 and low.endswith("ed") and low not in NOUNS and not low.endswith("eed"):
        return True
    return low.endswith("n't")
