terraform {
  backend "local" {}
  backend "local" {}
}
