module "two_parts" {
  source  = "foo/bar"
  version = "1.0.0"
}

module "git" {
  source  = "git::https://example.com/x/y"
  version = "1.0.0"
}

module "query" {
  source  = "x/y/z?ref=1"
  version = "1.0.0"
}
