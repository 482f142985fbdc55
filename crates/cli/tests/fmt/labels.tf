resource   random_pet   pet   {
}
data "local_file"   f {
  filename="x"
}
module    m {
  source = "./m"
}
