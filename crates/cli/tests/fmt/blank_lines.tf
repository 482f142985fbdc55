locals {
  a = 1
}



locals {
  b = 2
}


