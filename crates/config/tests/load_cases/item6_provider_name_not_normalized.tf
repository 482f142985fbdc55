provider "TEST" {}
