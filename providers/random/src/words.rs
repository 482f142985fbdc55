//! Word lists for random_pet names: adjectives, adverbs and animals,
//! chosen for this project.

pub const ADVERBS: &[&str] = &[
    "boldly",
    "briskly",
    "calmly",
    "cheerfully",
    "deftly",
    "eagerly",
    "evenly",
    "fairly",
    "gently",
    "gladly",
    "happily",
    "honestly",
    "keenly",
    "kindly",
    "lightly",
    "loudly",
    "merrily",
    "neatly",
    "nimbly",
    "openly",
    "patiently",
    "politely",
    "quickly",
    "quietly",
    "rapidly",
    "readily",
    "smoothly",
    "softly",
    "steadily",
    "swiftly",
    "warmly",
    "wisely",
];

pub const ADJECTIVES: &[&str] = &[
    "able", "amber", "brave", "bright", "calm", "clever", "cosmic", "crisp", "daring", "eager",
    "fancy", "fluent", "gentle", "golden", "handy", "humble", "jolly", "keen", "lively", "loyal",
    "lucid", "mellow", "merry", "modest", "noble", "polite", "proud", "quick", "rapid", "ready",
    "sharp", "shiny", "smart", "steady", "sunny", "swift", "tidy", "vivid", "warm", "witty",
];

pub const ANIMALS: &[&str] = &[
    "alpaca", "badger", "beaver", "bison", "bobcat", "camel", "cheetah", "condor", "coyote",
    "crane", "dingo", "dolphin", "eagle", "falcon", "ferret", "gazelle", "gecko", "heron", "ibex",
    "jackal", "koala", "lemur", "lynx", "marmot", "mink", "narwhal", "ocelot", "otter", "panda",
    "pelican", "puffin", "quokka", "raven", "salmon", "stork", "tapir", "toucan", "walrus",
    "wombat", "zebra",
];
