let () = Ppxlib.Driver.standalone ()
