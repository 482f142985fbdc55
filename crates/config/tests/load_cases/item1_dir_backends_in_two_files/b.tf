terraform {
  backend "local" {
    path = "x"
  }
}
