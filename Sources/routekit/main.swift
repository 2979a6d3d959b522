print("routekit")
