"""A generated corpus of parliamentary speeches (deterministic), shared by
the hansard contract tests and scripts/bench_hansard.py."""

import hashlib
import json
import random
import uuid

CHAMBERS = ["House of Representatives", "Senate"]
STATES = ["NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT"]
PARTIES = ["Labor", "Liberal", "Greens", "National", "Independent"]
TOPICS = {
    "climate change": "emissions targets, renewable energy and the warming climate",
    "health": "hospital waiting lists, Medicare bulk billing and aged care nurses",
    "education": "school funding, university fees and teacher shortages",
    "economy": "inflation, interest rates and the federal budget deficit",
    "housing": "rental affordability, first home buyers and social housing supply",
    "defence": "submarines, the defence force and regional security",
    "water": "the Murray-Darling basin, irrigation licences and drought",
    "immigration": "visa processing, skilled migration and refugee intake",
}
FIRST = ["Anne", "Bob", "Chloe", "David", "Emma", "Farid", "Grace", "Hamish", "Isla", "Jack",
         "Kylie", "Liam", "Mei", "Noah", "Olivia", "Priya", "Quinn", "Ruby", "Sam", "Tara"]
LAST = ["Albright", "Brennan", "Chen", "Dawson", "Evans", "Fraser", "Gupta", "Hughes", "Ito", "Jones",
        "Kaur", "Lee", "Murphy", "Nguyen", "O'Brien", "Patel", "Quigley", "Russo", "Singh", "Taylor"]


def speech_id(full_text):
    """The id folio gives a speech: SHA-256 of its text as a version-8 UUID."""
    b = bytearray(hashlib.sha256(full_text.encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x80
    b[8] = (b[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(b)))


def document_id(library, speech):
    return hashlib.sha256(f"{library}\0record:{speech}".encode()).hexdigest()[:16]


def speakers(count, rng):
    out = []
    for i in range(count):
        chamber = CHAMBERS[i % 2]
        out.append({
            "speaker": f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}",
            "party": PARTIES[i % len(PARTIES)],
            "chamber": chamber,
            "state": STATES[i % len(STATES)],
            "electorate": f"Division {i}" if chamber == "House of Representatives" else None,
        })
    return out


def speech_text(topic, rng, sentences):
    detail = TOPICS[topic]
    others = [t for t in TOPICS if t != topic]
    parts = [f"Mr Speaker, I rise to speak about {topic}: {detail}."]
    for n in range(sentences - 1):
        if rng.random() < 0.8:
            parts.append(
                f"Point {n + 1}: the government must act on {detail.split(',')[rng.randrange(2)]} "
                f"because constituents in my community raise {topic} with me every week."
            )
        else:
            parts.append(f"We must also remember {rng.choice(others)} and the people it affects.")
    return " ".join(parts)


def generate(count, seed=7, sentences=(3, 8), speaker_count=40):
    """`count` speeches as records of the hansard schema."""
    rng = random.Random(seed)
    people = speakers(speaker_count, rng)
    records = []
    for i in range(count):
        person = people[rng.randrange(len(people))]
        topic = rng.choice(list(TOPICS))
        tags = [topic] + rng.sample([t for t in TOPICS if t != topic], rng.randrange(3))
        text = f"[{i}] " + speech_text(topic, rng, rng.randint(*sentences))
        record = {
            "speech_id": speech_id(text),
            "title": f"{topic.title()} debate {i}",
            "full_text": text,
            "speaker": person["speaker"],
            "party": person["party"],
            "chamber": person["chamber"],
            "state": person["state"],
            "date": f"{rng.choice([2023, 2024])}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "hansard_reference": f"HANSARD-{i:06d}",
            "topic_tags": tags,
            "word_count": len(text.split()),
            "content_hash": hashlib.sha256(text.encode()).hexdigest(),
        }
        if person["electorate"]:
            record["electorate"] = person["electorate"]
        records.append(record)
    return records


def write_jsonl(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path
