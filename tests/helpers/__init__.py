"""What the test modules share: the corpus paths (:mod:`.corpus`) and the helpers more than one module calls.
Test modules import from here, never from each other."""
