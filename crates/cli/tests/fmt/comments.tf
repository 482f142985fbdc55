# top comment   with   spaces
locals {
  a = 1 # one
  bbb = 22     // two
  c = 3   /* block */
  # alone    here
  d = [ # open
    1,   # first
    2, # second
  ]
}
/* block
   comment */
