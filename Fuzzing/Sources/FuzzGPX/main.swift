import FuzzSupport

FuzzSupport.runLibFuzzer(fuzz)
