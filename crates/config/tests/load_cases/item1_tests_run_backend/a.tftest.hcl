run "a" {
  backend "local" {
    path = "x.tfstate"
  }
}
