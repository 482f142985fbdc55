module "m" {
  source = "./child"
  providers = {
    AWS   = aws
    aws.x = Google
  }
}
