module "test" {
  source  = "../boop"
  version = "1.0.0"
}
